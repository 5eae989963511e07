"""Retraction: ``retract`` takes back what a source, agent, method or observation said, and
``unretract`` puts it back (``language.retractions`` holds the events and their rules).

A retraction is planned a batch of facts at a time (``BATCH``, in identity order:
relationships before nodes, so a node knows which of its relationships stay) inside the
transaction that appends it (``gate.retraction_plan``: a few statements a batch), as one
``source.retracted`` event in a short transaction of its own: a concurrent write waits for
at most one batch. The batches share the retraction's id (``r-`` and 12 hex digits) and
stream. Its first batch also records the merges decided on
the evidence withdrawn — those whose ``nodes.merged`` event's provenance (source, method,
agent, observations cited, time) the withdrawal names — and proposes each for undoing as a
held ``unmerge_nodes`` in the review lane (``gate.review``): never undone behind a reviewer's
back, and the source and observations taken back (while it stands, a write from that
source is refused ``SOURCE_RETRACTED``, one citing such an observation from its own source
``OBSERVATION_RETRACTED``: ``gate.citations``). A dry run plans everything and appends
nothing: the impact report.

Writes landing while a retraction runs, on facts its cursor has passed, are not taken back:
running it again takes them. ``unretract ID`` puts back each fact the retraction changed that
nothing has changed since (the others are named, left as they are), in batches of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Literal
from uuid import uuid4

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Actor, EventCore, Log, Transaction
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.formula import FormulaProvider
from writegate.gate.moments import in_utc, moment_of
from writegate.gate.retraction_plan import Planned, Planner, Versions
from writegate.language import (
    FactImage,
    NodesMerged,
    RetractedFact,
    SourceRetracted,
    SourceUnretracted,
    Withdrawal,
    WriteProposed,
    draft,
    merge_stream,
    payload_of,
    provenance_of,
)
from writegate.projections.state import StateProjection

BATCH = 500  # facts an event (and a transaction) takes
UNMERGE = "unmerge_nodes"  # the operation a merge is proposed for undoing with
Progress = Callable[[int, int], None]  # (facts done, facts planned so far)


class KeptFact(BaseModel):
    model_config = ConfigDict(extra="forbid")

    identity: str
    confidence_before: float | None
    confidence: float | None
    sources: list[str]


class RetractResult(BaseModel):
    """The impact report (``dry_run``) or what the retraction did."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"] = "ok"
    dry_run: bool
    retraction: str | None  # its id (None: dry, or nothing to take back)
    withdrawal: Withdrawal
    reverted: list[str]  # lost their only support: back to the version before
    retracted: list[str]  # lost their only support, with none before: gone (or a stub)
    kept: list[KeptFact]  # other support remains, at the confidence it gives
    merges: list[str]  # decided on the evidence: proposed for undoing
    proposals: list[str] = []  # the review lane's proposals for them
    observations: list[str]  # the observations taken back
    projections: list[str] = ["state", "text index"]  # every projection follows the log
    facts: int
    batches: int
    seq: int | None = None  # the last batch's event
    event_id: str | None = None


def withdrawal_of(
    *,
    source: str | None = None,
    agent: str | None = None,
    method: str | None = None,
    observation: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
) -> Withdrawal:
    """The withdrawal named, checked: at least one of source, agent, method, observation."""
    named = {"source": source, "agent": agent, "method": method, "observation": observation}
    for name, value in named.items():
        if value is not None and not value.strip():
            raise GateRejection(ErrorCode.INVALID_ARGUMENT, f"{name} is empty", {"field": name})
    if all(v is None for v in named.values()):
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            "a retraction names a source, agent, method or observation to take back",
            {"field": "source"},
        )
    return Withdrawal(**named, since=_moment(since, "since"), until=_moment(until, "until"))


def _moment(value: datetime | str | None, field: str) -> str | None:
    if isinstance(value, datetime):
        try:
            return format_timestamp(in_utc(value))
        except ValueError as why:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT, f"{field} {why}", {"field": field}
            ) from None
    moment = moment_of(value, field)
    return None if moment is None else format_timestamp(moment)


def retract(
    log: Log,
    state: StateProjection,
    formula: FormulaProvider,
    actor: Actor,
    withdrawal: Withdrawal,
    *,
    reason: str,
    dry_run: bool = False,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> RetractResult:
    if not dry_run and not reason.strip():
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT, "a retraction needs a reason", {"field": "reason"}
        )
    retraction = "r-" + uuid4().hex[:12]
    planner = Planner(log, state, formula, withdrawal, set())
    with log.snapshot() as conn:
        merges = _merges(log, state, conn, withdrawal)
        observations = state.observations_given(conn, withdrawal)
    done: list[RetractedFact] = []
    cursor, number, last, proposals = "", 0, None, []
    try:
        while True:
            if dry_run:
                with log.snapshot() as conn:
                    names = state.withdrawn_facts(conn, withdrawal, cursor, batch)
                    planned = planner.batch(conn, names, partial(_versions_read, log))
            else:
                first = number == 0
                asked = _proposed(merges, retraction) if first else []
                payload = SourceRetracted(
                    retraction=retraction,
                    withdrawal=withdrawal,
                    reason=reason,
                    batch=number + 1,
                    facts=[],
                    merges_proposed=merges if first else [],
                    observations=observations if first else [],
                )
                made = _Batch(cursor, batch)
                retracting = _retracting(state, planner, payload, asked, made)
                outcome = log.append(actor, retracting, apart=True)  # a write waits one batch
                names, planned = made.names, made.planned
                if outcome.events:
                    last = outcome.events[-1]
                    proposals += [p.proposal for p in asked]
            if not names:
                number += int(last is not None and number == 0)  # a batch of no facts, said
                break
            number += 1
            cursor = names[-1]
            done += [p.fact for p in planned]
            if progress is not None:
                progress(len(done), len(done))
    finally:
        planner.history.close()  # the scratch model, even when a batch fails
    result = _result(done, withdrawal, merges, observations, number, dry_run, retraction, last)
    return result.model_copy(update={"proposals": proposals})


@dataclass
class _Batch:
    """One batch's cursor and size, and what its transaction found and planned."""

    cursor: str
    size: int
    names: list[str] = field(default_factory=list)
    planned: list[Planned] = field(default_factory=list)


def _versions_read(log: Log, streams: Sequence[str]) -> dict[str, int]:
    return {s: log.stream_version(s) for s in streams}


def versions_in(tx: Transaction) -> Versions:
    """The streams' versions as the append's transaction reads them, in one statement."""

    def read(streams: Sequence[str]) -> dict[str, int]:
        tx.versions_later(streams)()
        return {s: tx.stream_version(s) for s in streams}

    return read


def _retracting(
    state: StateProjection,
    planner: Planner,
    payload: SourceRetracted,
    asked: list[WriteProposed],
    made: _Batch,
) -> Callable[[Transaction], None]:
    """The batch planned in the append's transaction, and appended as one event."""

    def decide(tx: Transaction) -> None:
        made.names = state.withdrawn_facts(tx.conn, planner.withdrawal, made.cursor, made.size)
        made.planned = planner.batch(tx.conn, made.names, versions_in(tx))
        said = payload.batch == 1 and (payload.merges_proposed or payload.observations)
        if not made.planned and not said:  # a first batch also says what else it took back
            return
        facts = payload.model_copy(update={"facts": [p.fact for p in made.planned]})
        emitted(tx, facts, made.planned, asked)

    return decide


def emitted(
    tx: Transaction,
    payload: SourceRetracted | SourceUnretracted,
    planned: list[Planned],
    asked: list[WriteProposed],
) -> None:
    """The batch's event on its facts' streams, and the proposals."""
    streams = [payload.stream, *(p.stream for p in planned)]
    tx.emit(draft(payload, streams, request=_request(payload)))
    for proposal in asked:
        tx.emit(draft(proposal, [proposal.stream], expected={proposal.stream: 0}))


def _request(payload: SourceRetracted | SourceUnretracted) -> dict[str, object]:
    if isinstance(payload, SourceUnretracted):
        return {"retraction": payload.retraction, "reason": payload.reason}
    return {"withdrawal": payload.withdrawal.model_dump(mode="json"), "reason": payload.reason}


def _proposed(merges: list[str], retraction: str) -> list[WriteProposed]:
    return [
        WriteProposed(
            proposal=uuid4().hex,
            operation=UNMERGE,
            arguments={
                "merge": merge,
                "reason": f"retraction {retraction}",
                "source": f"retraction {retraction}",
                "extraction_method": "manual",
            },
            target=merge,
            reason=f"retraction {retraction} took back the evidence this merge was decided on",
        )
        for merge in merges
    ]


def _result(
    done: list[RetractedFact],
    withdrawal: Withdrawal,
    merges: list[str],
    observations: list[str],
    batches: int,
    dry_run: bool,
    retraction: str,
    last: EventCore | None,
) -> RetractResult:
    return RetractResult(
        dry_run=dry_run,
        retraction=None if dry_run or last is None else retraction,
        withdrawal=withdrawal,
        reverted=[f.identity for f in done if f.outcome == "reverted"],
        retracted=[f.identity for f in done if f.outcome == "retracted"],
        kept=[
            KeptFact(
                identity=f.identity,
                confidence_before=confidence_of(f.before),
                confidence=f.confidence,
                sources=list(dict.fromkeys(s.source for s in f.after.support)) if f.after else [],
            )
            for f in done
            if f.outcome == "kept"
        ],
        merges=merges,
        observations=observations,
        facts=len(done),
        batches=batches,
        seq=last.seq if last is not None else None,
        event_id=last.event_id if last is not None else None,
    )


def _merges(log: Log, state: StateProjection, conn: Sql, withdrawal: Withdrawal) -> list[str]:
    """The standing merges whose event's provenance the withdrawal names."""
    found = []
    for merge in state.recorded_merges(conn):
        event = log.latest(merge_stream(merge))
        if event is None or not isinstance(payload_of(event), NodesMerged):
            continue
        provenance = provenance_of(event)
        w = withdrawal
        cited = provenance.observations or [] if provenance is not None else []
        when = format_timestamp(event.occurred_at)
        if (
            (w.source is not None and (provenance is None or provenance.source != w.source))
            or (w.agent is not None and event.actor.agent != w.agent)
            or (
                w.method is not None
                and (provenance is None or provenance.extraction_method != w.method)
            )
            or (w.observation is not None and w.observation not in cited)
            or (w.since is not None and when < w.since)
            or (w.until is not None and when >= w.until)
        ):
            continue
        found.append(merge)
    return found


def confidence_of(image: FactImage | None) -> float | None:
    if image is None or not image.support:
        return None
    return image.support[-1].corroborated
