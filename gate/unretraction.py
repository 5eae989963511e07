"""Undoing a retraction: ``unretract ID`` (``gate.retraction`` takes back, this puts back).

Each fact the retraction changed is put back as the retraction found it — its values, who
set them, its supports and their confidences — where it is still as the retraction left it
(compared image for image); a fact written since is named (``changed``) and left as it is.
Where the retraction gave a fact a new version (reverted, retracted), putting it back is
another (its stream moves); a kept fact's supports come back with no new version. The
batches are ``source.unretracted`` events on the retraction's stream, each expecting the
versions it was planned from, as the retraction's are.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Actor, Log, VersionConflict
from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.retraction import BATCH, RETRIES, Progress, emitting
from writegate.gate.retraction_plan import Planned, fact_stream
from writegate.language import (
    RetractedFact,
    SourceRetracted,
    SourceUnretracted,
    corroboration_stream,
    payload_of,
    retraction_stream,
)
from writegate.projections.state import StateProjection


class UnretractResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"] = "ok"
    retraction: str
    restored: list[str]
    changed: list[str]  # written since the retraction: left as they are
    batches: int
    seq: int | None = None


def unretract(
    log: Log,
    state: StateProjection,
    actor: Actor,
    retraction: str,
    *,
    reason: str = "",
    batch: int = BATCH,
    progress: Progress | None = None,
) -> UnretractResult:
    """Put back what retraction ``retraction`` took, fact by fact, where nothing changed since."""
    stream = retraction_stream(retraction)
    batches: list[SourceRetracted] = []
    for event in log.iter_events(stream=stream):
        match payload_of(event):
            case SourceRetracted() as taken:
                batches.append(taken)
            case SourceUnretracted():
                raise GateRejection(
                    ErrorCode.RETRACTION_NOT_FOUND,
                    f"retraction {retraction} was undone already (seq {event.seq})",
                    {"retraction": retraction, "undone": event.seq},
                )
    if not batches:
        raise GateRejection(
            ErrorCode.RETRACTION_NOT_FOUND,
            f"no retraction {retraction!r} in the log",
            {"retraction": retraction},
        )
    facts = [f for b in batches for f in b.facts]
    restored: list[str] = []
    changed: list[str] = []
    number, last = 0, None
    for start in range(0, len(facts), batch):
        chunk = facts[start : start + batch]
        for _attempt in range(RETRIES):
            with log.snapshot() as conn:
                planned, left = _restoring(log, state, conn, chunk)
            payload = SourceUnretracted(
                retraction=retraction,
                reason=reason,
                batch=number + 1,
                facts=[p.fact for p in planned],
                changed=left,
            )
            try:
                last = log.append(actor, emitting(payload, planned, [])).events[-1]
            except VersionConflict:
                continue
            break
        else:
            raise GateRejection(
                ErrorCode.LOG_UNAVAILABLE,
                f"unretract {retraction}: batch {number + 1} was written over while planned",
                {"retraction": retraction},
            )
        number += 1
        restored += [p.fact.identity for p in planned]
        changed += left
        if progress is not None:
            progress(start + len(chunk), len(facts))
    return UnretractResult(
        retraction=retraction,
        restored=restored,
        changed=changed,
        batches=number,
        seq=last.seq if last is not None else None,
    )


def _restoring(
    log: Log, state: StateProjection, conn: Sql, chunk: list[RetractedFact]
) -> tuple[list[Planned], list[str]]:
    """Each fact of ``chunk`` as the retraction found it, where it is still as it left it."""
    planned: list[Planned] = []
    left: list[str] = []
    for fact in chunk:
        found = state.fact_image(conn, fact.identity)
        now = found[1] if found is not None else None
        if now != fact.after:
            left.append(fact.identity)
            continue
        stream = fact_stream(fact.kind, fact.identity)
        expected = {s: log.stream_version(s) for s in (stream, corroboration_stream(stream))}
        back = fact.before
        if back is None:  # a retraction's fact was held before it
            left.append(fact.identity)
            continue
        taken = stream
        if fact.outcome == "kept":
            taken = corroboration_stream(stream)
        else:
            version = expected[stream] + 1
            support = [s.model_copy(update={"version": version}) for s in back.support]
            back = back.model_copy(update={"version": version, "support": support})
        undone = RetractedFact(
            identity=fact.identity,
            kind=fact.kind,
            outcome=fact.outcome,
            withdrawn=fact.withdrawn,
            confidence=back.support[-1].corroborated if back.support else None,
            before=now,
            after=back,
        )
        planned.append(Planned(undone, taken, expected))
    return planned, left
