"""The auditor's view of conflicts: every held fact a write replaced, and every write a
conflict policy refused — who, when, which values, at which confidences.

Supersessions are read from the events that made them (``superseded`` in a write's
payload); refusals from the rejections table (a refused write appends no event), each
conflicting value one row, from the refusal's details as recorded (a refusal recorded
without them is one row naming the operation). Reads only.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from writegate.eventlog import Log
from writegate.eventlog.events import format_timestamp
from writegate.gate.errors import ErrorCode
from writegate.gate.rejections import Rejection, RejectionLog
from writegate.language import (
    NodeWritten,
    RelationshipWritten,
    payload_of,
    provenance_of,
)

_OUT = ConfigDict(extra="forbid", frozen=True)
CONFLICT_CODES = (
    ErrorCode.CONFLICT.value,
    ErrorCode.CONFLICT_LOWER_CONFIDENCE.value,
    ErrorCode.AUTHORITY_CONFLICT.value,
)


class ConflictEntry(BaseModel):
    """One conflict: a held value superseded by a write (``seq``), or a write refused."""

    model_config = _OUT

    outcome: Literal["superseded", "refused"]
    at: str
    seq: int | None  # the superseding event (None: refused, nothing appended)
    subject: str  # the node or relationship (a refusal recorded without details: the operation)
    property: str | None  # None: a whole relationship of a functional type
    agent: str  # who wrote (or tried to)
    confidence: float | None  # that write's
    source: str | None
    held_value: JsonValue = None
    held_by: str | None = None
    held_seq: int | None = None
    held_confidence: float | None = None
    held_source: str | None = None
    error_code: str | None = None
    message: str | None = None


class ConflictAudit(BaseModel):
    model_config = _OUT

    superseded: int
    refused: int
    entries: list[ConflictEntry]


def audit_conflicts(
    log: Log, *, since: datetime | None = None, until: datetime | None = None
) -> ConflictAudit:
    """Every supersession and conflict refusal between ``since`` and ``until``, by time."""
    superseded = list(_superseded(log, since, until))
    refused = [
        entry
        for r in RejectionLog(log).read(since=since, until=until)
        if r.error_code in CONFLICT_CODES
        for entry in _refused(r)
    ]
    entries = sorted([*superseded, *refused], key=lambda e: e.at)
    return ConflictAudit(superseded=len(superseded), refused=len(refused), entries=entries)


def _superseded(
    log: Log, since: datetime | None, until: datetime | None
) -> Iterator[ConflictEntry]:
    types = [NodeWritten.event_type, RelationshipWritten.event_type]
    for event in log.iter_events(types=types, since=since, until=until):
        payload = payload_of(event)
        if not isinstance(payload, NodeWritten | RelationshipWritten) or not payload.superseded:
            continue
        provenance = provenance_of(event)
        for old in payload.superseded:
            yield ConflictEntry(
                outcome="superseded",
                at=format_timestamp(event.occurred_at),
                seq=event.seq,
                subject=payload.subject,
                property=old.property,
                agent=event.actor.agent,
                confidence=provenance.confidence if provenance else None,
                source=provenance.source if provenance else None,
                held_value=old.value,
                held_by=old.agent,
                held_seq=old.seq,
                held_confidence=old.confidence,
                held_source=old.source,
            )


class _Held(BaseModel):
    """A conflict's held value as the refusal's details give it (``gate.conflicts``)."""

    value: JsonValue = None
    seq: int | None = None
    agent: str | None = None
    confidence: float | None = None
    source: str | None = None


class _Incoming(BaseModel):
    confidence: float | None = None
    source: str | None = None


class _Conflict(BaseModel):
    property: str | None = None
    existing: _Held | None = None  # absent from a merge's refusal: it names both values
    incoming: _Incoming | None = None


class _Details(BaseModel):
    """What a conflict refusal's details hold (other keys, as a merge's refusals add, are
    ignored)."""

    subject: str | None = None
    conflicts: list[_Conflict] = []


def _refused(r: Rejection) -> Iterator[ConflictEntry]:
    """The rows of one refusal: each conflicting value, or one row if its details were not
    recorded (an older row) or name no held value."""
    try:
        details = _Details.model_validate_json(r.details) if r.details else _Details()
    except ValidationError:
        details = _Details()
    subject = details.subject or r.operation
    held = [c for c in details.conflicts if c.existing is not None]
    for conflict in held or [_Conflict()]:
        old, new = conflict.existing or _Held(), conflict.incoming or _Incoming()
        yield ConflictEntry(
            outcome="refused",
            at=r.at,
            seq=None,
            subject=subject,
            property=conflict.property,
            agent=r.agent,
            confidence=new.confidence,
            source=new.source,
            held_value=old.value,
            held_by=old.agent,
            held_seq=old.seq,
            held_confidence=old.confidence,
            held_source=old.source,
            error_code=r.error_code,
            message=r.message,
        )
