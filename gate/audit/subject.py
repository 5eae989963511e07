"""Everything held about one node, for the person it is about: a subject access or
portability request (GDPR Art. 15 and 20) answered as one typed document.

Built from the readers the audit already has, not from the events by hand: the node's
trail (``gate.audit.trail``: every version, corroboration and relationship event, with its
provenance and what it changed), the state read model's current values and who set each
(a merge keeps them), and the log for what a trail leaves out — each event's id and stated
valid time, the values a write superseded, the name a resolved write used, the merges and
unmerges that folded nodes into this one or this one into another, the histories of the
duplicates merged into it, its relationships' corroborations, the full text of every
observation those writes cite, and the held writes and refused requests naming it
(``gate.audit.held``). ``event_seqs`` lists every event the document was read from: the
PROV-O rendering (``projections.prov_subject``) maps exactly those, as the projection would.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Event, Log
from writegate.gate.audit import held
from writegate.gate.audit.held import HeldObservation, HeldProposal, MergeEvent
from writegate.gate.audit.trail import RelationshipEntry, Support, Trail, TrailEntry, trail
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.rejections import Rejection
from writegate.language import (
    PSEUDONYM,
    NodeRef,
    NodeWritten,
    RelationshipCorroborated,
    RelationshipWritten,
    Superseded,
    WriteProvenance,
    node_stream,
    payload_of,
)
from writegate.projections.state import StateProjection

_OUT = ConfigDict(extra="forbid", frozen=True)


class Recorded(BaseModel):
    """What the log adds to a trail entry: the event's id, the valid time its writer
    stated, the values it replaced, and the name entity resolution moved it from."""

    model_config = _OUT

    event_id: str
    valid_from: str | None
    valid_to: str | None
    superseded: list[Superseded]
    resolved_from: str | None  # the identity the writer named, resolved to this node


class Version(TrailEntry):
    """One event in the life of the node (a write, a corroboration, a deletion)."""

    recorded: Recorded


class RelationshipVersion(RelationshipEntry):
    """One event of a relationship that starts or ends at the node."""

    recorded: Recorded


class HeldValue(BaseModel):
    """A value the node holds now, and the write that set it (a merge keeps the writer)."""

    model_config = _OUT

    property: str
    value: Any
    seq: int
    agent: str
    source: str | None
    extraction_method: str | None
    reliability: float | None
    confidence: float | None


class Current(BaseModel):
    """The node as the state read model holds it now (None in ``SubjectExport``: deleted)."""

    model_config = _OUT

    label: str
    keys: dict[str, Any]
    properties: dict[str, Any]
    version: int
    stub: bool
    updated_seq: int
    updated_at: str
    updated_by: str
    values: list[HeldValue]  # one per property, by name
    aliases: list[str]  # merged duplicates' identities that resolve to it


class MergedHistory(BaseModel):
    """The life of a duplicate merged into the node (still an alias of it)."""

    model_config = _OUT

    identity: str
    versions: list[Version]
    relationships: list[RelationshipVersion]


class SubjectExport(BaseModel):
    """Everything the log and its read model hold about one node, with its provenance."""

    model_config = _OUT

    identity: str
    label: str
    keys: dict[str, Any]
    head_seq: int  # the log's head the document was read at
    exists: bool
    current: Current | None
    versions: list[Version]
    supported_by: list[Support]
    relationships: list[RelationshipVersion]
    merges: list[MergeEvent]
    merged_in: list[MergedHistory]
    observations: list[HeldObservation]
    proposals: list[HeldProposal]
    refusals: list[Rejection]
    agents: list[str]  # every agent that wrote, corroborated, merged, recorded, proposed or
    # was refused
    event_seqs: list[int]  # every event read: what the PROV-O rendering maps


def export_subject(log: Log, state: StateProjection, identity: str) -> SubjectExport:
    """Everything held about the node ``identity``, or ``NODE_NOT_FOUND``."""
    with log.snapshot() as conn:
        if not log.read(limit=1, stream=node_stream(identity)).events:
            ref = NodeRef.parse(identity)
            if PSEUDONYM in identity:  # named by keys the log no longer (or never) held
                raise GateRejection(
                    ErrorCode.NODE_NOT_FOUND,
                    f"no {ref.label} with those keys is held (a personal label: never "
                    "written, or forgotten)",
                    {"label": ref.label},
                )
            raise GateRejection(
                ErrorCode.NODE_NOT_FOUND,
                f"node {identity} does not exist",
                {"label": ref.label, "keys": ref.keys},
            )
        head = log.head()[0]
        current = _current(state, conn, identity)
        lives = [
            (life, _relationships(log, life))
            for life in [trail(log, n) for n in [identity, *(current.aliases if current else [])]]
        ]
        merged = held.merges(log, identity)
        held_writes = held.proposals(log, identity)
        refused = held.refusals(log, identity)
        seqs = {
            *(e.seq for life, related in lives for e in [*life.entries, *related]),
            *(m.seq for m, _ in merged),
            *(p.seq for p in held_writes),
            *(p.decided_seq for p in held_writes if p.decided_seq is not None),
        }
        events = log.read_seqs(seqs)
        cited = held.observations(log, events.values())
    (versions, relationships), *others = [_life(life, related, events) for life, related in lives]
    agents = {
        *(e.written_by or e.agent for life, related in lives for e in [*life.entries, *related]),
        *(e.agent for life, related in lives for e in [*life.entries, *related]),
        *(m.agent for m, _ in merged),
        *(o.agent for o in cited),
        *(p.agent for p in held_writes),
        *(p.decided_by for p in held_writes if p.decided_by),
        *(r.agent for r in refused),
    }
    ref = NodeRef.parse(identity)
    return SubjectExport(
        identity=identity,
        label=ref.label,
        keys=dict(ref.keys or (current.keys if current else {})),  # a pseudonym names none
        head_seq=head,
        exists=lives[0][0].exists,
        current=current,
        versions=versions,
        supported_by=lives[0][0].supported_by,
        relationships=relationships,
        merges=[m for m, _ in merged],
        merged_in=[
            MergedHistory(identity=life.identity, versions=v, relationships=r)
            for (life, _), (v, r) in zip(lives[1:], others, strict=True)
        ],
        observations=cited,
        proposals=held_writes,
        refusals=refused,
        agents=sorted(agents),
        event_seqs=sorted(seqs | {o.seq for o in cited}),
    )


def _relationships(log: Log, life: Trail) -> list[RelationshipEntry]:
    """The events of the node's relationships, with their corroborations (a node's trail
    leaves those out: each is on its relationship's corroboration stream), oldest first."""
    first: dict[str, RelationshipEntry] = {}
    for entry in life.relationships:
        first.setdefault(entry.relationship, entry)
    unstated = {"valid_from": None, "valid_to": None, "superseded_by": None, "cascade_of": None}
    heard = [
        RelationshipEntry(**{**first[rid].model_dump(), **entry.model_dump(), **unstated})
        for rid in first
        for entry in trail(log, rid, "relationship").entries
        if entry.type == RelationshipCorroborated.event_type
    ]
    return sorted([*life.relationships, *heard], key=lambda e: e.seq)


def _life(
    life: Trail, related: list[RelationshipEntry], events: dict[int, Event]
) -> tuple[list[Version], list[RelationshipVersion]]:
    """A node's trail with what the log adds to each entry."""
    return (
        [_version(e, events[e.seq]) for e in life.entries],
        [
            RelationshipVersion(**e.model_dump(by_alias=True), recorded=_recorded(events[e.seq]))
            for e in related
        ],
    )


def _version(entry: TrailEntry, event: Event) -> Version:
    return Version(**entry.model_dump(by_alias=True), recorded=_recorded(event))


def _recorded(event: Event) -> Recorded:
    payload = payload_of(event)
    valid_from = valid_to = resolved = None
    superseded: list[Superseded] = []
    match payload:
        case NodeWritten() | RelationshipWritten():
            valid_from, valid_to = payload.valid_from, payload.valid_to
            superseded = list(payload.superseded or ())
            if isinstance(payload, NodeWritten):
                resolved = payload.resolved_from
        case _:
            pass
    return Recorded(
        event_id=event.event_id,
        valid_from=valid_from,
        valid_to=valid_to,
        superseded=superseded,
        resolved_from=resolved,
    )


def _current(state: StateProjection, conn: Any, identity: str) -> Current | None:
    row = state.node(conn, identity)
    if row is None:
        return None
    values = []
    for record in state.fact_records(conn, identity):
        claim = WriteProvenance.read(record.provenance) if record.provenance else None
        values.append(
            HeldValue(
                property=record.property,
                value=row.properties.get(record.property),
                seq=record.seq,
                agent=record.agent,
                source=claim.source if claim else None,
                extraction_method=claim.extraction_method if claim else None,
                reliability=claim.reliability if claim else None,
                confidence=claim.confidence if claim else None,
            )
        )
    return Current(
        label=row.label,
        keys=row.keys,
        properties=row.properties,
        version=row.version,
        stub=row.stub,
        updated_seq=row.updated_seq,
        updated_at=row.updated_at,
        updated_by=row.updated_by,
        values=values,
        aliases=state.aliases_to(conn, identity),
    )
