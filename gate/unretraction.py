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

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Actor, Log, Transaction
from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.retraction import BATCH, Progress, emitted, versions_in
from writegate.gate.retraction_plan import Planned, Versions, fact_stream
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
    for start in range(0, max(len(facts), 1), batch):  # one batch at least: it is said
        chunk = facts[start : start + batch]
        payload = SourceUnretracted(
            retraction=retraction, reason=reason, batch=number + 1, facts=[]
        )
        # each batch follows the last on the retraction's stream: two undoings cannot interleave
        at = len(batches) + number
        box: list[tuple[list[Planned], list[str]]] = []

        putting = _putting_back(state, chunk, payload, at, box)
        last = log.append(actor, putting, apart=True).events[-1]
        planned, left = box[-1]
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


def _putting_back(
    state: StateProjection,
    chunk: list[RetractedFact],
    payload: SourceUnretracted,
    at: int,
    box: list[tuple[list[Planned], list[str]]],
) -> Callable[[Transaction], None]:
    """One batch put back, planned in the append's transaction."""

    def decide(tx: Transaction) -> None:
        planned, left = _restoring(state, tx.conn, chunk, versions_in(tx))
        box.append((planned, left))
        if tx.stream_version(payload.stream) != at:
            raise GateRejection(
                ErrorCode.RETRACTION_NOT_FOUND,
                f"retraction {payload.retraction} is being undone by another call",
                {"retraction": payload.retraction},
            )
        filled = payload.model_copy(update={"facts": [p.fact for p in planned], "changed": left})
        emitted(tx, filled, planned, [])

    return decide


def _restoring(
    state: StateProjection, conn: Sql, chunk: list[RetractedFact], versions: Versions
) -> tuple[list[Planned], list[str]]:
    """Each fact of ``chunk`` as the retraction found it, where it is still as it left it."""
    images = state.fact_images(conn, [f.identity for f in chunk])
    streams = [fact_stream(f.kind, f.identity) for f in chunk]
    now_at = versions(streams)
    planned: list[Planned] = []
    left: list[str] = []
    for fact, stream in zip(chunk, streams, strict=True):
        found = images.get(fact.identity)
        now = found[1] if found is not None else None
        back = fact.before
        if now != fact.after or back is None:
            left.append(fact.identity)
            continue
        taken = stream
        if fact.outcome == "kept":
            taken = corroboration_stream(stream)
        else:
            version = now_at[stream] + 1
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
        planned.append(Planned(undone, taken))
    return planned, left
