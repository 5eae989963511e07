"""The life of one node or relationship: every event of it, oldest first, with what each
changed and who said so — and, for a node, every event of the relationships that started or
ended at it, so a functional relationship a later one replaced stays findable from its node
(``audit node``), with its provenance and what replaced it. Each write names the
observations it cited, with the start of their text. Corroborations (``gate.corroboration``)
are entries too, changing nothing; ``supported_by`` lists the writes supporting the current
version: the one that wrote it and each corroboration since.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Event, Log
from writegate.eventlog.events import format_timestamp
from writegate.gate.reads.timeline import stub_keys, touching
from writegate.language import (
    NodeCorroborated,
    NodeDeleted,
    NodeWritten,
    ObservationRecorded,
    Payload,
    RelationshipCorroborated,
    RelationshipDeleted,
    RelationshipWritten,
    SourceRetracted,
    SourceUnretracted,
    SupportRecord,
    WriteProvenance,
    corroboration_stream,
    node_stream,
    observation_stream,
    payload_of,
    provenance_of,
    relationship_stream,
    writer_of,
)
from writegate.language.observations import document_of, passage_of
from writegate.projections.state import merge_properties

_OUT = ConfigDict(extra="forbid", frozen=True)
Kind = Literal["node", "relationship"]
EXCERPT = 120  # characters of a cited observation's text a trail shows


class Change(BaseModel):
    model_config = _OUT

    before: Any
    after: Any


class CitedObservation(BaseModel):
    """An observation a write cited: its id, and the start of its text."""

    model_config = _OUT

    observation_id: str
    excerpt: str  # empty: the log holds no such observation (a copy cut short)


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
    # whose write the event carries on, when not its actor's (a merge re-drawing a
    # relationship, an unmerge putting values back): ``language.writer_of``
    written_by: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # the observations the write cited (left out: none)
    observations: list[CitedObservation] = Field(default_factory=list, exclude_if=lambda v: not v)


class RelationshipEntry(TrailEntry):
    """An event of a relationship that starts or ends at the node whose trail this is."""

    relationship: str  # its identity
    relationship_type: str
    direction: Literal["out", "in"]  # out: it starts at the node
    other: str  # the node at its other end
    valid_from: str | None  # as the write stated it
    valid_to: str | None
    superseded_by: str | None  # a deletion: the functional relationship that replaced it
    cascade_of: str | None  # a deletion: the node whose deletion detached it


class Support(BaseModel):
    """One write supporting the current version: who said it, from what, how, how sure."""

    model_config = _OUT

    seq: int
    occurred_at: str
    kind: Literal["written", "corroborated"]
    agent: str
    source: str
    extraction_method: str
    confidence: float  # this write's own
    corroborated_confidence: float  # the fact's with this support (the provider's rule)


class Trail(BaseModel):
    model_config = _OUT

    kind: Kind
    identity: str
    exists: bool
    entries: list[TrailEntry]
    # a node's: the events of its relationships (both directions), oldest first
    relationships: list[RelationshipEntry] = []
    # the writes supporting the current version, oldest first (left out: none)
    supported_by: list[Support] = Field(default_factory=list, exclude_if=lambda v: not v)


def trail(log: Log, identity: str, kind: Kind = "node") -> Trail:
    """Every event of one node (or relationship), oldest first, with a property diff."""
    stream = node_stream(identity) if kind == "node" else relationship_stream(identity)
    cited = _Excerpts(log)
    with log.snapshot():
        entries = sorted(
            [
                *_entries(log, stream, identity, kind, cited),
                *_entries(log, corroboration_stream(stream), identity, kind, cited),
            ],
            key=lambda found: found[0].seq,
        )
        related = (
            sorted(
                (
                    _related(entry, event, payload, identity)
                    for rid in touching(log, identity)
                    for entry, event, payload in _entries(
                        log, relationship_stream(rid), rid, "relationship", cited
                    )
                ),
                key=lambda e: e.seq,
            )
            if kind == "node"
            else []
        )
    exists = False
    supports: list[Support] = []
    for entry, _, payload in entries:
        match payload:
            case NodeWritten():
                exists, supports = True, _support(entry, "written", None)
            case RelationshipWritten():  # in a node's stream: it was created as a stub
                exists = True
                supports = _support(entry, "written", None) if kind == "relationship" else []
            case NodeDeleted() | RelationshipDeleted():
                exists, supports = False, []
            case NodeCorroborated() | RelationshipCorroborated():
                supports += _support(entry, "corroborated", payload.corroborated_confidence)
            case SourceRetracted() | SourceUnretracted():  # the fact as its image after says
                for fact in payload.facts:
                    if fact.identity == identity:
                        exists = fact.after is not None
                        supports = _supports_of(fact.after.support if fact.after else [])
            case _:
                pass
    return Trail(
        kind=kind,
        identity=identity,
        exists=exists,
        entries=[entry for entry, _, _ in entries],
        relationships=related,
        supported_by=supports,
    )


def _supports_of(records: list[SupportRecord]) -> list[Support]:
    return [
        Support(
            seq=r.seq,
            occurred_at=r.occurred_at,
            kind="written" if r.kind == "written" else "corroborated",
            agent=r.agent,
            source=r.source,
            extraction_method=r.method,
            confidence=r.confidence,
            corroborated_confidence=r.corroborated,
        )
        for r in records
    ]


def _support(
    entry: TrailEntry, kind: Literal["written", "corroborated"], corroborated: float | None
) -> list[Support]:
    """The entry as a support (none: a write that records no provenance)."""
    if entry.source is None or entry.extraction_method is None or entry.confidence is None:
        return []
    return [
        Support(
            seq=entry.seq,
            occurred_at=entry.occurred_at,
            kind=kind,
            agent=entry.written_by or entry.agent,
            source=entry.source,
            extraction_method=entry.extraction_method,
            confidence=entry.confidence,
            corroborated_confidence=entry.confidence if corroborated is None else corroborated,
        )
    ]


class _Excerpts:
    """The observations writes cite, each read from the log once per trail."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.known: dict[str, str] = {}

    def of(self, provenance: WriteProvenance | None) -> list[CitedObservation]:
        cited = provenance.observations if provenance is not None else None
        return [CitedObservation(observation_id=o, excerpt=self._excerpt(o)) for o in cited or ()]

    def _excerpt(self, observation: str) -> str:
        """The start of the text cited (a passage's: of the passage, as its event cut it)."""
        if observation not in self.known:
            event = self.log.latest(observation_stream(document_of(observation)))
            payload = payload_of(event) if event is not None else None
            text = payload.text or "" if isinstance(payload, ObservationRecorded) else ""
            if (cut := passage_of(observation)) is not None:
                spans = payload.spans() if isinstance(payload, ObservationRecorded) else []
                text = next((text[a:b] for a, b in spans if a == cut[1]), "")
            line = " ".join(text.split())
            self.known[observation] = line if len(line) <= EXCERPT else line[: EXCERPT - 1] + "…"
        return self.known[observation]


def _entries(
    log: Log, stream: str, identity: str, kind: Kind, cited: _Excerpts
) -> Iterator[tuple[TrailEntry, Event, Payload]]:
    properties: dict[str, Any] = {}
    for event in log.iter_events(stream=stream):
        before = dict(properties)
        remapped = None
        payload = payload_of(event)
        match payload:
            case NodeWritten(node=node, properties=changes):
                remapped = node.remapped_from
                properties = merge_properties({**properties, **node.keys}, changes)
                properties.pop("_stub", None)
            case RelationshipWritten() as written if kind == "relationship":
                remapped = written.remapped_from
                properties = merge_properties(properties, written.properties)
            case RelationshipWritten() as written:  # this node was created as a stub
                properties = {**stub_keys(written, identity), "_stub": True}
            case NodeDeleted() | RelationshipDeleted():
                properties = {}
            case _:
                pass
        provenance = provenance_of(event)
        writer = writer_of(event, payload)
        entry = TrailEntry(
            seq=event.seq,
            occurred_at=format_timestamp(event.occurred_at),
            type=event.type,
            version=(
                payload.version
                if isinstance(payload, NodeCorroborated | RelationshipCorroborated)
                else event.streams[stream]  # a corroboration makes no version: it names one
            ),
            agent=event.actor.agent,
            session=event.actor.session,
            transport=event.actor.transport,
            source=provenance.source if provenance else None,
            extraction_method=provenance.extraction_method if provenance else None,
            reliability=provenance.reliability if provenance else None,
            confidence=provenance.confidence if provenance else None,
            formula=provenance.formula if provenance else None,
            write_gate_version=provenance.write_gate_version if provenance else None,
            schema_version=provenance.schema_version if provenance else None,
            remapped_from=remapped,
            changes=_diff(before, properties),
            written_by=writer if writer != event.actor.agent else None,
            observations=cited.of(provenance),
        )
        yield entry, event, payload


def _related(entry: TrailEntry, event: Event, payload: Payload, node: str) -> RelationshipEntry:
    start = end = rtype = ""
    valid_from = valid_to = superseded_by = cascade_of = None
    match payload:
        case RelationshipWritten() as written:
            start, end, rtype = written.from_node.identity, written.to_node.identity, written.type
            valid_from, valid_to = written.valid_from, written.valid_to
        case RelationshipDeleted() as deleted:
            start, end, rtype = deleted.from_identity, deleted.to_identity, deleted.type
            superseded_by, cascade_of = deleted.superseded_by, deleted.cascade_of
        case _:
            pass
    return RelationshipEntry(
        **entry.model_dump(),
        relationship=payload.subject,
        relationship_type=rtype,
        direction="out" if start == node else "in",
        other=end if start == node else start,
        valid_from=valid_from,
        valid_to=valid_to,
        superseded_by=superseded_by,
        cascade_of=cascade_of,
    )


def _diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Change]:
    keys = sorted(set(before) | set(after))
    return {
        k: Change(before=before.get(k), after=after.get(k))
        for k in keys
        if before.get(k) != after.get(k)
    }
