"""The auditor's questions, answered from the log: where did this fact come from, who wrote
what, and can the record be trusted.

Everything here reads events (and the rejections table); nothing writes. Results are
pydantic models so the CLI's ``--format json`` is stable for scripts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Event, EventLog
from writegate.eventlog.events import format_timestamp
from writegate.gate.rejections import RejectionLog
from writegate.projections.state import merge_properties
from writegate.projections.vocabulary import (
    NODE_DELETED,
    NODE_WRITTEN,
    RELATIONSHIP_DELETED,
    RELATIONSHIP_WRITTEN,
    node_stream,
    relationship_stream,
)

_OUT = ConfigDict(extra="forbid", frozen=True)
GRAPH_EVENTS = (NODE_WRITTEN, NODE_DELETED, RELATIONSHIP_WRITTEN, RELATIONSHIP_DELETED)
Facet = Literal["agent", "source", "method"]


class Change(BaseModel):
    model_config = _OUT

    before: Any
    after: Any


class TrailEntry(BaseModel):
    """One event in the life of a node or relationship, and what it changed."""

    model_config = _OUT

    seq: int
    occurred_at: str
    type: str
    version: int
    agent: str
    session: str | None
    transport: str
    source: str | None
    extraction_method: str | None
    reliability: float | None
    confidence: float | None
    formula: str | None
    write_gate_version: str | None
    schema_version: str | None
    remapped_from: str | None
    changes: dict[str, Change]


class Trail(BaseModel):
    model_config = _OUT

    kind: Literal["node", "relationship"]
    identity: str
    exists: bool
    entries: list[TrailEntry]


class Histogram(BaseModel):
    """Confidence in ten buckets [0, 0.1), …, [0.9, 1.0]."""

    model_config = _OUT

    buckets: list[int]
    count: int
    minimum: float | None
    maximum: float | None
    mean: float | None


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


class NodeAsOf(BaseModel):
    model_config = _OUT

    identity: str
    as_of: str
    state: Literal["absent", "present", "deleted"]
    version: int
    properties: dict[str, Any]
    stub: bool
    last_seq: int | None
    last_agent: str | None
    last_source: str | None
    confidence: float | None


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


def _diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Change]:
    keys = sorted(set(before) | set(after))
    return {
        k: Change(before=before.get(k), after=after.get(k))
        for k in keys
        if before.get(k) != after.get(k)
    }


def _subject(event: Event) -> tuple[str, str] | None:
    """(label or type, identity) the event is mainly about."""
    payload = event.payload
    if event.type in (NODE_WRITTEN, NODE_DELETED):
        return payload["node"]["label"], payload["node"]["identity"]
    if event.type in (RELATIONSHIP_WRITTEN, RELATIONSHIP_DELETED):
        return payload["type"], payload["identity"]
    return None


class Auditor:
    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.rejections = RejectionLog(log)

    def trail(self, identity: str, kind: Literal["node", "relationship"] = "node") -> Trail:
        """Every event of one node (or relationship), oldest first, with a property diff."""
        stream = node_stream(identity) if kind == "node" else relationship_stream(identity)
        entries: list[TrailEntry] = []
        properties: dict[str, Any] = {}
        exists = False
        for event in self.log.iter_events(stream=stream):
            before = dict(properties)
            payload = event.payload
            remapped = None
            if event.type == NODE_WRITTEN:
                remapped = payload["node"].get("remapped_from")
                properties = merge_properties(
                    {**properties, **payload["node"]["keys"]}, payload["properties"]
                )
                exists = True
            elif event.type == RELATIONSHIP_WRITTEN and kind == "relationship":
                remapped = payload.get("remapped_from")
                properties = merge_properties(properties, payload["properties"])
                exists = True
            elif event.type == RELATIONSHIP_WRITTEN:  # this node was created as a stub endpoint
                ref = next(s for s in payload["stubs_created"] if s["identity"] == identity)
                properties = {**ref["keys"], "_stub": True}
                exists = True
            elif event.type in (NODE_DELETED, RELATIONSHIP_DELETED):
                properties, exists = {}, False
            if event.type == NODE_WRITTEN:
                properties.pop("_stub", None)
            provenance = event.provenance or {}
            entries.append(
                TrailEntry(
                    seq=event.seq,
                    occurred_at=format_timestamp(event.occurred_at),
                    type=event.type,
                    version=event.streams[stream],
                    agent=event.actor.agent,
                    session=event.actor.session,
                    transport=event.actor.transport,
                    source=provenance.get("source"),
                    extraction_method=provenance.get("extraction_method"),
                    reliability=provenance.get("reliability"),
                    confidence=provenance.get("confidence"),
                    formula=provenance.get("formula"),
                    write_gate_version=provenance.get("write_gate_version"),
                    schema_version=provenance.get("schema_version"),
                    remapped_from=remapped,
                    changes=_diff(before, properties),
                )
            )
        return Trail(kind=kind, identity=identity, exists=exists, entries=entries)

    def node_as_of(self, identity: str, moment: datetime) -> NodeAsOf:
        """The node as it stood at ``moment`` (replaying its own stream up to then)."""
        state: Literal["absent", "present", "deleted"] = "absent"
        properties: dict[str, Any] = {}
        version, stub, last = 0, False, None
        stream = node_stream(identity)
        for event in self.log.iter_events(stream=stream, until=moment):
            version, last = event.streams[stream], event
            if event.type == NODE_WRITTEN:
                base = properties if state == "present" else {}
                properties = merge_properties(
                    {**base, **event.payload["node"]["keys"]}, event.payload["properties"]
                )
                state, stub = "present", False
            elif event.type == RELATIONSHIP_WRITTEN:
                ref = next(s for s in event.payload["stubs_created"] if s["identity"] == identity)
                properties, state, stub = dict(ref["keys"]), "present", True
            elif event.type == NODE_DELETED:
                properties, state, stub = {}, "deleted", False
        provenance = (last.provenance or {}) if last else {}
        return NodeAsOf(
            identity=identity,
            as_of=format_timestamp(moment),
            state=state,
            version=version,
            properties=properties,
            stub=stub,
            last_seq=last.seq if last else None,
            last_agent=last.actor.agent if last else None,
            last_source=provenance.get("source"),
            confidence=provenance.get("confidence"),
        )

    def summary(
        self,
        facet: Facet,
        value: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Summary:
        """What one agent, source or extraction method wrote."""
        events = list(self.log.iter_events(types=GRAPH_EVENTS, since=since, until=until))

        def matches(event: Event) -> bool:
            provenance = event.provenance or {}
            if facet == "agent":
                return event.actor.agent == value
            key = "source" if facet == "source" else "extraction_method"
            return provenance.get(key) == value

        chosen = [e for e in events if matches(e)]
        labels = Counter(subject[0] for e in chosen if (subject := _subject(e)))
        written = [e for e in chosen if e.type in (NODE_WRITTEN, RELATIONSHIP_WRITTEN)]
        return Summary(
            facet=facet,
            value=value,
            events=len(chosen),
            written=len(written),
            deleted=len(chosen) - len(written),
            by_label=dict(sorted(labels.items())),
            first_seq=chosen[0].seq if chosen else None,
            last_seq=chosen[-1].seq if chosen else None,
            first_at=format_timestamp(chosen[0].occurred_at) if chosen else None,
            last_at=format_timestamp(chosen[-1].occurred_at) if chosen else None,
            confidence=histogram((e.provenance or {}).get("confidence", 0.0) for e in written),
        )


class ProjectionLag(BaseModel):
    model_config = _OUT

    name: str
    checkpoint: int | None
    lag: int | None
    error: str | None = None


class Report(BaseModel):
    """One page an auditor can hand on."""

    model_config = _OUT

    events: int
    head_seq: int
    head_hash: str
    chain_ok: bool
    chain_detail: str
    first_at: str | None
    last_at: str | None
    writes_by_agent: dict[str, int]
    rejections_by_agent: dict[str, int]
    rejections_by_code: dict[str, int]
    writes_by_method: dict[str, int]
    writes_by_label: dict[str, int]
    confidence: Histogram
    remaps: dict[str, int]  # "':person' -> Person": how often schema drift was caught
    unresolved_stubs: int
    projections: list[ProjectionLag]


def _sorted(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def build_report(
    auditor: Auditor, unresolved_stubs: int, projections: list[ProjectionLag]
) -> Report:
    log = auditor.log
    verified = log.verify()
    head_seq, head_hash = log.head()
    by_agent: Counter[str] = Counter()
    by_method: Counter[str] = Counter()
    by_label: Counter[str] = Counter()
    remaps: Counter[str] = Counter()
    confidences: list[float] = []
    first = last = None
    for event in log.iter_events():
        first = first or event
        last = event
        if event.type not in GRAPH_EVENTS:
            continue
        provenance = event.provenance or {}
        by_agent[event.actor.agent] += 1
        by_method[provenance.get("extraction_method", "?")] += 1
        subject = _subject(event)
        if subject:
            by_label[subject[0]] += 1
        if event.type == NODE_WRITTEN and (crumb := event.payload["node"].get("remapped_from")):
            remaps[f"{crumb} -> {event.payload['node']['label']}"] += 1
        if event.type == RELATIONSHIP_WRITTEN and (crumb := event.payload.get("remapped_from")):
            remaps[f"{crumb} -> {event.payload['type']}"] += 1
        if event.type in (NODE_WRITTEN, RELATIONSHIP_WRITTEN):
            confidences.append(provenance.get("confidence", 0.0))
    rejected = list(auditor.rejections.read())
    return Report(
        events=head_seq,
        head_seq=head_seq,
        head_hash=head_hash,
        chain_ok=verified.ok,
        chain_detail=verified.describe(),
        first_at=format_timestamp(first.occurred_at) if first else None,
        last_at=format_timestamp(last.occurred_at) if last else None,
        writes_by_agent=_sorted(by_agent),
        rejections_by_agent=_sorted(Counter(r.agent for r in rejected)),
        rejections_by_code=_sorted(Counter(r.error_code for r in rejected)),
        writes_by_method=_sorted(by_method),
        writes_by_label=_sorted(by_label),
        confidence=histogram(confidences),
        remaps=_sorted(remaps),
        unresolved_stubs=unresolved_stubs,
        projections=projections,
    )
