"""The auditor's view of duplicates: every write entity resolution landed on a node the
graph held (``resolved_from`` in its event), and every write it refused as a probable
duplicate (``POSSIBLE_DUPLICATE`` in the rejections table: a refusal appends no event).
Reads only."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Log
from writegate.eventlog.events import format_timestamp
from writegate.gate.errors import ErrorCode
from writegate.gate.rejections import RejectionLog
from writegate.language import NodeWritten, payload_of

_OUT = ConfigDict(extra="forbid", frozen=True)


class DuplicateEntry(BaseModel):
    model_config = _OUT

    outcome: Literal["resolved", "proposed"]
    at: str
    seq: int | None  # the resolved write's event (None: proposed, nothing appended)
    agent: str
    written_as: str | None  # the identity the writer named (resolved)
    landed_on: str | None  # the existing node it was written to (resolved)
    message: str | None = None  # the refusal, naming the candidate (proposed)


class DuplicateAudit(BaseModel):
    model_config = _OUT

    resolved: int
    proposed: int
    entries: list[DuplicateEntry]


def audit_duplicates(
    log: Log, *, since: datetime | None = None, until: datetime | None = None
) -> DuplicateAudit:
    """Every resolution and every duplicate proposal between ``since`` and ``until``."""
    resolved = list(_resolved(log, since, until))
    proposed = [
        DuplicateEntry(
            outcome="proposed",
            at=r.at,
            seq=None,
            agent=r.agent,
            written_as=None,
            landed_on=None,
            message=r.message,
        )
        for r in RejectionLog(log).read(since=since, until=until)
        if r.error_code == ErrorCode.POSSIBLE_DUPLICATE.value
    ]
    entries = sorted([*resolved, *proposed], key=lambda e: e.at)
    return DuplicateAudit(resolved=len(resolved), proposed=len(proposed), entries=entries)


def _resolved(log: Log, since: datetime | None, until: datetime | None) -> Iterator[DuplicateEntry]:
    for event in log.iter_events(types=[NodeWritten.event_type], since=since, until=until):
        written = payload_of(event)
        if isinstance(written, NodeWritten) and written.resolved_from:
            yield DuplicateEntry(
                outcome="resolved",
                at=format_timestamp(event.occurred_at),
                seq=event.seq,
                agent=event.actor.agent,
                written_as=written.resolved_from,
                landed_on=written.node.identity,
            )
