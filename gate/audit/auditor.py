"""The auditor's questions, answered from the log: where did this fact come from, who wrote
what, and can the record be trusted.

Everything here reads events (and the rejections table); nothing writes. Results are
pydantic models so the CLI's ``--format json`` is stable for scripts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Event, Log
from writegate.eventlog.events import format_timestamp
from writegate.gate.audit.subject import SubjectExport, export_subject
from writegate.gate.audit.trail import Trail, trail
from writegate.gate.rejections import RejectionLog
from writegate.language import (
    GRAPH_EVENT_TYPES,
    NodeDeleted,
    NodeWritten,
    Payload,
    ProposalDecided,
    RelationshipDeleted,
    RelationshipWritten,
    WriteProvenance,
    payload_of,
    provenance_of,
)
from writegate.projections.state import StateProjection

_OUT = ConfigDict(extra="forbid", frozen=True)
Facet = Literal["agent", "source", "method"]


class AuditEvent(BaseModel):
    """An event as an auditor reads it: all of it, and its place in the chain."""

    model_config = _OUT

    seq: int
    occurred_at: str
    type: str
    agent: str
    session: str | None
    transport: str
    payload: dict[str, Any]
    provenance: dict[str, Any] | None
    hash: str


class AuditEvents(BaseModel):
    model_config = _OUT

    events: list[AuditEvent]
    next_cursor: str | None


class NewestEvents(BaseModel):
    """The newest events that pass the filters, newest first; older ones continue from
    ``next_to_seq`` (pass it as ``to_seq``)."""

    model_config = _OUT

    events: list[Event]
    next_to_seq: int | None


class Histogram(BaseModel):
    """Confidence in ten buckets [0, 0.1), …, [0.9, 1.0]."""

    model_config = _OUT

    buckets: list[int]
    count: int
    minimum: float | None
    maximum: float | None
    mean: float | None


class Decision(BaseModel):
    """A review decision an agent made: ``audit agent`` of a reviewer lists them."""

    model_config = _OUT

    seq: int
    occurred_at: str
    proposal: str
    decision: Literal["approved", "rejected"]
    writer: str | None  # whose proposal (None: an older rejection, which did not say)


class Summary(BaseModel):
    model_config = _OUT

    facet: Facet
    value: str
    events: int
    written: int
    deleted: int
    by_label: dict[str, int]
    first_seq: int | None
    last_seq: int | None
    first_at: str | None
    last_at: str | None
    confidence: Histogram
    # an agent's: the review decisions it made (left out when none)
    decisions: list[Decision] = Field(default_factory=list, exclude_if=lambda v: not v)


def histogram(values: Iterable[float]) -> Histogram:
    values = list(values)
    buckets = [0] * 10
    for value in values:
        buckets[min(int(value * 10), 9)] += 1
    return Histogram(
        buckets=buckets,
        count=len(values),
        minimum=min(values) if values else None,
        maximum=max(values) if values else None,
        mean=round(sum(values) / len(values), 6) if values else None,
    )


def subject_of(payload: Payload) -> tuple[str, str] | None:
    """(label or type, identity) the event is mainly about."""
    match payload:
        case NodeWritten(node=node) | NodeDeleted(node=node):
            return node.label, node.identity
        case RelationshipWritten() | RelationshipDeleted():
            return payload.type, payload.identity
    return None


class Auditor:
    def __init__(self, log: Log, state: StateProjection | None = None) -> None:
        self.log = log
        self.rejections = RejectionLog(log)
        # the read model a gate's log keeps inline (current values and who set them)
        self.state = state or next((p for p in log.inline if isinstance(p, StateProjection)), None)

    def trail(self, identity: str, kind: Literal["node", "relationship"] = "node") -> Trail:
        """Every event of one node (or relationship), and of a node's relationships."""
        return trail(self.log, identity, kind)

    def export_subject(self, identity: str) -> SubjectExport:
        """Everything held about one node (``gate.audit.subject``), or ``NODE_NOT_FOUND``."""
        if self.state is None:
            raise ValueError("exporting a subject needs a log opened with the StateProjection")
        return export_subject(self.log, self.state, identity)

    def events(
        self,
        *,
        after: int = 0,
        limit: int = 50,
        agent: str | None = None,
        types: list[str] | None = None,
        stream: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        shown: Callable[[list[Event]], list[Event]] | None = None,
    ) -> AuditEvents:
        """One page of the log, filtered: every accepted write with its actor, provenance
        and hash; continue with ``next_cursor``. ``shown`` leaves out, whole, the events a
        caller may not read (a scoped auditor's: ``gate.server.audit_scopes``)."""
        page = self.log.read(
            after_seq=after,
            limit=limit,
            agent=agent,
            types=types,
            stream=stream,
            since=since,
            until=until,
        )
        return AuditEvents(
            events=[
                AuditEvent(
                    seq=e.seq,
                    occurred_at=format_timestamp(e.occurred_at),
                    type=e.type,
                    agent=e.actor.agent,
                    session=e.actor.session,
                    transport=e.actor.transport,
                    payload=e.payload,
                    provenance=e.provenance,
                    hash=e.hash,
                )
                for e in (shown(page.events) if shown else page.events)
            ],
            next_cursor=str(page.next_after) if page.next_after is not None else None,
        )

    def newest(
        self,
        *,
        limit: int = 50,
        to_seq: int | None = None,
        agent: str | None = None,
        types: list[str] | None = None,
        stream: str | Sequence[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> NewestEvents:
        """The log read backwards from ``to_seq`` (or the head): seq windows that double in
        size until ``limit`` events pass the filters, so a recent page costs a recent read,
        however long the log."""
        filters: dict[str, Any] = {"agent": agent, "types": types, "stream": stream}
        log = self.log
        with log.snapshot():
            high = log.head()[0] if to_seq is None else to_seq
            if until is not None:
                high = min(high, log.last_seq_at(until))
            floor = 0
            if since is not None:
                first = log.read(since=since, limit=1).events
                floor = first[0].seq - 1 if first else high
            found: list[Event] = []
            window = max(limit + 1, 256)
            while high > floor and len(found) <= limit:
                low = max(high - window, floor)
                found = [*log.iter_events(after_seq=low, to_seq=high, **filters), *found]
                high, window = low, window * 2
        newest_first = found[::-1]
        events = newest_first[:limit]
        more = len(newest_first) > limit
        return NewestEvents(events=events, next_to_seq=events[-1].seq - 1 if more else None)

    def summary(
        self,
        facet: Facet,
        value: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Summary:
        """What one agent, source or extraction method wrote (and an agent, decided)."""
        types = (*GRAPH_EVENT_TYPES, *((ProposalDecided.event_type,) if facet == "agent" else ()))
        events = self.log.iter_events(types=types, since=since, until=until)
        chosen: list[tuple[Event, Payload, WriteProvenance | None]] = []
        decisions: list[Decision] = []
        for event in events:
            if event.type == ProposalDecided.event_type:
                decided = _decision(event, value)
                if decided is not None:
                    decisions.append(decided)
                continue
            provenance = provenance_of(event)
            if facet == "agent":
                hit = event.actor.agent == value
            elif facet == "source":
                hit = provenance is not None and provenance.source == value
            else:
                hit = provenance is not None and provenance.extraction_method == value
            if hit:
                chosen.append((event, payload_of(event), provenance))
        labels = Counter(subject[0] for _, p, _ in chosen if (subject := subject_of(p)))
        written = [
            (e, prov) for e, p, prov in chosen if isinstance(p, NodeWritten | RelationshipWritten)
        ]
        first, last = (chosen[0][0], chosen[-1][0]) if chosen else (None, None)
        return Summary(
            facet=facet,
            value=value,
            events=len(chosen),
            written=len(written),
            deleted=len(chosen) - len(written),
            by_label=dict(sorted(labels.items())),
            first_seq=first.seq if first else None,
            last_seq=last.seq if last else None,
            first_at=format_timestamp(first.occurred_at) if first else None,
            last_at=format_timestamp(last.occurred_at) if last else None,
            confidence=histogram(prov.confidence if prov else 0.0 for _, prov in written),
            decisions=decisions,
        )


def _decision(event: Event, reviewer: str) -> Decision | None:
    """The decision ``event`` holds if ``reviewer`` made it (found by the payload's
    reviewer, so older approvals, whose actor was the writer, are found too)."""
    decided = payload_of(event)
    if not isinstance(decided, ProposalDecided) or decided.reviewer != reviewer:
        return None
    older = event.actor.agent if decided.decision == "approved" else None
    return Decision(
        seq=event.seq,
        occurred_at=format_timestamp(event.occurred_at),
        proposal=decided.proposal,
        decision=decided.decision,
        writer=decided.writer or older,
    )
