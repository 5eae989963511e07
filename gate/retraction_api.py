"""The gate's retraction methods (``Gate.retract`` / ``Gate.unretract``): faces over
``gate.retraction`` and ``gate.unretraction`` that answer a refusal as ``Rejected``."""

from __future__ import annotations

from datetime import datetime

from writegate.eventlog import Actor, Log
from writegate.gate.formula import FormulaProvider
from writegate.gate.models import Rejected
from writegate.gate.results import REFUSALS, rejected
from writegate.gate.retraction import BATCH, Progress, RetractResult, retract, withdrawal_of
from writegate.gate.unretraction import UnretractResult, unretract
from writegate.projections.state import StateProjection


class RetractionOperations:
    """Mixed into ``Gate``: what it needs of it."""

    log: Log
    state: StateProjection
    formula: FormulaProvider
    default_actor: Actor

    def retract(
        self,
        *,
        source: str | None = None,
        agent: str | None = None,
        method: str | None = None,
        observation: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        reason: str = "",
        dry_run: bool = False,
        actor: Actor | None = None,
        batch: int = BATCH,
        progress: Progress | None = None,
    ) -> RetractResult | Rejected:
        """Take back what the source, agent, method or observation named (within the
        window) said (``gate.retraction``); a dry run is the impact report."""
        try:
            withdrawal = withdrawal_of(
                source=source,
                agent=agent,
                method=method,
                observation=observation,
                since=since,
                until=until,
            )
            who = actor or self.default_actor
            return retract(
                self.log,
                self.state,
                self.formula,
                who,
                withdrawal,
                reason=reason,
                dry_run=dry_run,
                batch=batch,
                progress=progress,
            )
        except REFUSALS as exc:
            return rejected(exc)

    def unretract(
        self,
        retraction_id: str,
        *,
        reason: str = "",
        actor: Actor | None = None,
        batch: int = BATCH,
        progress: Progress | None = None,
    ) -> UnretractResult | Rejected:
        """Put back what a retraction took, where nothing changed since (``gate.retraction``)."""
        try:
            who = actor or self.default_actor
            return unretract(
                self.log,
                self.state,
                who,
                retraction_id,
                reason=reason,
                batch=batch,
                progress=progress,
            )
        except REFUSALS as exc:
            return rejected(exc)
