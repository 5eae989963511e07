"""What a retraction makes of each fact: the planner of ``gate.retraction``.

A batch of facts at a time: each fact's image now (``projections.state.retraction_queries``),
the supports the withdrawal names taken from it, and

* supports left (``kept``): the same row, supported by them, each at the confidence the
  formula provider's corroboration rule gives the fact with the supports up to it (over
  distinct sources, each at its best, as ``gate.corroboration`` computes it);
* none left: the fact's history (its stream's events and its corroborations') replayed
  into a scratch read model (``gate.retraction_history``), and its versions before, latest
  first, searched for one that holds a support not withdrawn (``reverted`` to it, as a
  new version), or none (``retracted``: gone, or a stub where the node still has
  relationships not withdrawn).

A real retraction plans each batch inside the transaction that appends it (reading the
rows, a few statements a batch, and the streams' versions in one), so nothing can land
between the plan and the event; a dry run plans on a read snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from writegate.eventlog import Log
from writegate.eventlog.sql import Sql
from writegate.gate.formula import FormulaProvider, corroborated
from writegate.gate.retraction_history import History
from writegate.language import (
    FactImage,
    RetractedFact,
    SupportRecord,
    Withdrawal,
    corroboration_stream,
    node_stream,
    relationship_stream,
)
from writegate.projections.state import StateProjection


def withdraws(withdrawal: Withdrawal, support: SupportRecord) -> bool:
    """Whether ``withdrawal`` names ``support``: every criterion it states holds."""
    w, s = withdrawal, support
    if w.source is not None and s.source != w.source:
        return False
    if w.agent is not None and s.agent != w.agent:
        return False
    if w.method is not None and s.method != w.method:
        return False
    if w.observation is not None and not any(
        o == w.observation or o.startswith(w.observation + "#") for o in s.observations
    ):
        return False
    if w.since is not None and s.occurred_at < w.since:
        return False
    return w.until is None or s.occurred_at < w.until


def fact_stream(kind: str, identity: str) -> str:
    return node_stream(identity) if kind == "node" else relationship_stream(identity)


def reweighed(formula: FormulaProvider, supports: Sequence[SupportRecord]) -> list[SupportRecord]:
    """``supports`` each at the fact's confidence with those up to it, by the provider's rule."""
    best: dict[str, float] = {}
    out = []
    for s in supports:
        best[s.source] = max(best.get(s.source, 0.0), s.confidence)
        value = corroborated(formula, list(best.values()))
        out.append(s.model_copy(update={"corroborated": value}))
    return out


@dataclass(frozen=True)
class Planned:
    """One fact's outcome, and the stream the batch's event takes for it."""

    fact: RetractedFact
    stream: str


Versions = Callable[[Sequence[str]], Mapping[str, int]]  # each stream's version now


@dataclass
class Planner:
    """Plans facts on ``conn`` (the append's transaction, or a dry run's snapshot)."""

    log: Log
    state: StateProjection
    formula: FormulaProvider
    withdrawal: Withdrawal
    removed: set[str]  # the facts this retraction has planned gone so far
    touching: dict[str, set[str]] = field(default_factory=dict)  # the batch's nodes' edges
    history: History = field(init=False)  # the facts' earlier versions, replayed

    def __post_init__(self) -> None:
        self.history = History(self.state)

    def batch(self, conn: Sql, names: Sequence[str], versions: Versions) -> list[Planned]:
        """What the retraction makes of each of ``names`` a support it names holds up."""
        images = self.state.fact_images(conn, names)
        streams = {i: fact_stream(kind, i) for i, (kind, _) in images.items()}
        now = versions(list(streams.values()))
        nodes = [i for i, (kind, _) in images.items() if kind == "node"]
        self.touching = self.state.touching(conn, nodes)
        planned = []
        for identity in names:
            if identity in images:
                kind, before = images[identity]
                fact = self._fact(conn, identity, kind, before, now[streams[identity]])
                if fact is not None:
                    planned.append(fact)
        return planned

    def _fact(
        self, conn: Sql, identity: str, kind: str, before: FactImage, held: int
    ) -> Planned | None:
        """What the retraction makes of one fact, its stream at version ``held``."""
        taken = [s for s in before.support if withdraws(self.withdrawal, s)]
        if not taken:
            return None
        stream = fact_stream(kind, identity)
        withdrawn = [s.seq for s in taken]
        left = [s for s in before.support if not withdraws(self.withdrawal, s)]
        if left:
            kept = before.model_copy(update={"support": reweighed(self.formula, left)})
            fact = RetractedFact(
                identity=identity,
                kind="node" if kind == "node" else "relationship",
                outcome="kept",
                withdrawn=withdrawn,
                confidence=kept.support[-1].corroborated,
                before=before,
                after=kept,
            )
            return Planned(fact, corroboration_stream(stream))
        version = held + 1  # the version the batch's event gives it
        streams = [stream, corroboration_stream(stream)]
        earlier = (
            self.history.earlier(conn, identity, kind, streams, self._left) if held > 1 else None
        )
        after: FactImage | None
        if earlier is not None:
            support = [s.model_copy(update={"version": version}) for s in earlier.support]
            after = earlier.model_copy(update={"version": version, "support": support})
        else:
            after = self._stub(conn, kind, identity, before, version)
        if after is None:
            self.removed.add(identity)
        fact = RetractedFact(
            identity=identity,
            kind="node" if kind == "node" else "relationship",
            outcome="reverted" if earlier is not None else "retracted",
            withdrawn=withdrawn,
            confidence=_confidence(after),
            before=before,
            after=after,
        )
        return Planned(fact, stream)

    def _stub(
        self, conn: Sql, kind: str, identity: str, before: FactImage, version: int
    ) -> FactImage | None:
        """A node with relationships not withdrawn stays as their endpoint, a stub."""
        if kind != "node":
            return None
        if not self.touching.get(identity, set()) - self.removed:
            return None
        return before.model_copy(
            update={
                "properties": dict(before.keys or {}),
                "stub": True,
                "version": version,
                "facts": [],
                "support": [],
            }
        )

    def _left(self, image: FactImage) -> FactImage | None:
        """``image`` supported by what the withdrawal leaves, reweighed (None: nothing)."""
        left = [s for s in image.support if not withdraws(self.withdrawal, s)]
        return image.model_copy(update={"support": reweighed(self.formula, left)}) if left else None


def _confidence(image: FactImage | None) -> float | None:
    """A fact's confidence as its image holds it: its last support's (None: unsupported)."""
    if image is None or not image.support:
        return None
    return image.support[-1].corroborated
