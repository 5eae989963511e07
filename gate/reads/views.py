"""What reads return: bounded views of the graph, each node and edge with its provenance.

Agents weigh what they read by where it came from, so every view carries the last
write's source, method, confidence, agent and time. ``node_view`` and ``edge_view`` build
them from the state model's rows (``projections.state``), which the log wrote and typed:
without validating them again (``trusted``), as replays read events, since a search's
answer is some two hundred views and validating each cost a third of building it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Event
from writegate.eventlog.events import format_timestamp, parse_timestamp, trusted
from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.formulas.decay import decayed
from writegate.gate.models import NodeRef
from writegate.language import (
    Authority,
    NodeWritten,
    RelationshipWritten,
    WriteProvenance,
    parse_node_identity,
    payload_of,
    provenance_of,
)
from writegate.projections.state import (
    EdgeRow,
    Hit,
    NodeRow,
    StateProjection,
    Support,
    sources,
)

_OUT = ConfigDict(extra="forbid", frozen=True)


class Provenance(BaseModel):
    """Who last wrote this, from what, and how much to trust it."""

    model_config = _OUT

    source: str
    extraction_method: str
    confidence: float
    agent: str
    written_at: str
    seq: int
    # the confidence aged by the schema's half-life for its method, now (never stored)
    decayed_confidence: float | None = Field(default=None, exclude_if=lambda v: v is None)
    # the observations the write cited: what it was extracted from (left out: none)
    observations: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    # corroborated (``gate.corroboration``): the fact's confidence with the independent
    # support of its distinct ``sources``, by the formula provider's rule when the last
    # corroboration landed (left out: the fact has none)
    corroborated_confidence: float | None = Field(default=None, exclude_if=lambda v: v is None)
    sources: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    # its authority, lowest along its lineage (``gate.authority``; left out: none ranked)
    authority: Authority | None = Field(default=None, exclude_if=lambda v: v is None)


@dataclass(frozen=True)
class Decay:
    """Read-time temporal decay: each method's half-life (the schema's ``half_lives``)."""

    half_lives: Mapping[str, timedelta]
    now: datetime

    def of(self, confidence: float, method: str, written_at: str) -> float | None:
        if method not in self.half_lives:
            return None
        age = self.now - parse_timestamp(written_at)
        return decayed(confidence, method, age, self.half_lives)


class NodeView(BaseModel):
    model_config = _OUT

    label: str
    merge_keys: dict[str, Any]
    properties: dict[str, Any]
    version: int
    stub: bool
    remapped_from: str | None
    provenance: Provenance
    # a search's match: how many of its relationships the answer leaves out (the
    # ``neighbors`` tool reads them); absent on any other node
    more_relationships: int | None = Field(default=None, exclude_if=lambda v: v is None)


class EdgeView(BaseModel):
    model_config = _OUT

    type: str
    from_node: NodeRef = Field(serialization_alias="from")
    to_node: NodeRef = Field(serialization_alias="to")
    properties: dict[str, Any]
    version: int
    provenance: Provenance
    # its valid time, in a read at a past or valid time (``as_of`` / ``valid_at``)
    valid_from: str | None = Field(default=None, exclude_if=lambda v: v is None)
    valid_to: str | None = Field(default=None, exclude_if=lambda v: v is None)


class Subgraph(BaseModel):
    """Nodes and the edges between them; ``next_cursor`` pages matches, ``truncated`` flags caps."""

    model_config = _OUT

    nodes: list[NodeView]
    edges: list[EdgeView]
    next_cursor: str | None = None
    truncated: bool = False
    # a scoped read's relationships leading from these nodes into scopes the caller cannot
    # see, counted per scope (``gate.reads.scoped``); absent for an unscoped read
    withheld: dict[str, int] | None = Field(default=None, exclude_if=lambda v: v is None)


class PathResult(BaseModel):
    model_config = _OUT

    found: bool
    length: int | None  # edges on the path
    nodes: list[NodeView]
    edges: list[EdgeView]
    # a scoped read's relationships leading from the path's nodes into scopes the caller
    # cannot see, per scope; absent for an unscoped read
    withheld: dict[str, int] | None = Field(default=None, exclude_if=lambda v: v is None)


class HistoryEntry(BaseModel):
    model_config = _OUT

    seq: int
    event_id: str
    type: str
    occurred_at: str
    agent: str
    session: str | None
    source: str | None
    extraction_method: str | None
    reliability: float | None
    confidence: float | None
    schema_version: str | None
    remapped_from: str | None
    changes: dict[str, Any]
    observations: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)


class NodeHistory(BaseModel):
    model_config = _OUT

    node: NodeRef
    entries: list[HistoryEntry]
    next_cursor: str | None = None
    # a scoped read's relationships leading from the node into scopes the caller cannot
    # see, per scope (the entries of writes naming a node there are left out); absent
    # for an unscoped read
    withheld: dict[str, int] | None = Field(default=None, exclude_if=lambda v: v is None)


class Stats(BaseModel):
    model_config = _OUT

    events: int
    head_hash: str
    nodes: int
    relationships: int
    stubs: int
    labels: dict[str, int]
    relationship_types: dict[str, int]
    schema_version: str | None


def provenance_of_event(event: Event) -> Provenance:
    """The provenance of the write ``event`` (a read at a past time has no row to ask)."""
    return _provenance(
        provenance_of(event), event.actor.agent, format_timestamp(event.occurred_at), event.seq
    )


def _of_row(
    row: NodeRow | EdgeRow, decay: Decay | None, heard: Sequence[Support] = ()
) -> Provenance:
    seen = _provenance(row.provenance, row.updated_by, row.updated_at, row.updated_seq, decay)
    return corroborated(seen, row.provenance, heard)


def corroborated(
    seen: Provenance, written: WriteProvenance | None, heard: Sequence[Support]
) -> Provenance:
    """``seen`` with the fact's corroborations (none: as it was)."""
    if not heard:
        return seen
    return seen.model_copy(update=supported(written.source if written else None, heard))


def supported(source: str | None, heard: Sequence[Support]) -> dict[str, Any]:
    """What every read shows of a fact last written from ``source`` and corroborated by
    ``heard``: its confidence with that support and its distinct sources (none heard:
    nothing, the last write's confidence stands)."""
    if not heard:
        return {}
    return {
        "corroborated_confidence": heard[-1].corroborated,
        "sources": list(dict.fromkeys([*([source] if source else []), *sources(heard)])),
    }


def _provenance(
    p: WriteProvenance | None, agent: str, written_at: str, seq: int, decay: Decay | None = None
) -> Provenance:
    return trusted(
        Provenance,
        {
            "source": p.source if p else "",
            "extraction_method": p.extraction_method if p else "",
            "confidence": p.confidence if p else 0.0,
            "agent": agent,
            "written_at": written_at,
            "seq": seq,
            "decayed_confidence": (
                decay.of(p.confidence, p.extraction_method, written_at) if decay and p else None
            ),
            "observations": p.observations if p else None,
            "corroborated_confidence": None,
            "sources": None,
            "authority": p.authority if p else None,
        },
    )


def ref_of(identity: str) -> NodeRef:
    label, keys = parse_node_identity(identity)
    return trusted(NodeRef, {"label": label, "merge_keys": keys})


def node_view(row: NodeRow, decay: Decay | None = None, heard: Sequence[Support] = ()) -> NodeView:
    return trusted(
        NodeView,
        {
            "label": row.label,
            "merge_keys": row.keys,
            "properties": row.properties,
            "version": row.version,
            "stub": row.stub,
            "remapped_from": row.remapped_from,
            "provenance": _of_row(row, decay, heard),
            "more_relationships": None,
        },
    )


def edge_view(
    row: EdgeRow,
    decay: Decay | None = None,
    heard: Sequence[Support] = (),
    refs: dict[str, NodeRef] | None = None,
) -> EdgeView:
    """``refs``: the ends already named in this answer (a node ends several of its edges:
    each named once, its keys parsed once; the models are frozen, so shared)."""
    named = {} if refs is None else refs
    for end in (row.from_identity, row.to_identity):
        if end not in named:
            named[end] = ref_of(end)
    return trusted(
        EdgeView,
        {
            "type": row.type,
            "from_node": named[row.from_identity],
            "to_node": named[row.to_identity],
            "properties": row.properties,
            "version": row.version,
            "provenance": _of_row(row, decay, heard),
            "valid_from": None,
            "valid_to": None,
        },
    )


def history_entry(event: Event) -> HistoryEntry:
    """One event as a line of a node's provenance trail."""
    provenance = provenance_of(event)
    changes: dict[str, Any] = {}
    remapped = None
    match payload_of(event):
        case NodeWritten(node=node, properties=properties):
            changes, remapped = properties, node.remapped_from
        case RelationshipWritten():  # in a node's stream: it was created as a stub
            changes = {"_stub": True}
        case _:
            pass
    return HistoryEntry(
        seq=event.seq,
        event_id=event.event_id,
        type=event.type,
        occurred_at=format_timestamp(event.occurred_at),
        agent=event.actor.agent,
        session=event.actor.session,
        source=provenance.source if provenance else None,
        extraction_method=provenance.extraction_method if provenance else None,
        reliability=provenance.reliability if provenance else None,
        confidence=provenance.confidence if provenance else None,
        schema_version=provenance.schema_version if provenance else None,
        remapped_from=remapped,
        changes=changes,
        observations=provenance.observations if provenance else None,
    )


def index_page(
    state: StateProjection, conn: Sql, query: str, kind: str, limit: int, cursor: str | None
) -> tuple[list[str], str | None]:
    """One page of the text index's hits of ``kind`` (their identities, the most relevant
    first) and the cursor of the next (none at the end); a cursor no search gave is
    ``INVALID_ARGUMENT``."""
    hits, next_cursor = index_hits(state, conn, query, kind, limit, cursor)
    return [h.identity for h in hits], next_cursor


def index_hits(
    state: StateProjection, conn: Sql, query: str, kind: str, limit: int, cursor: str | None
) -> tuple[list[Hit], str | None]:
    """``index_page`` with each hit's score."""
    try:
        hits = state.text_index(conn).search(conn, query, kind, limit + 1, cursor)
    except ValueError:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT, "cursor is not one this search gave", {"field": "cursor"}
        ) from None
    page = hits[:limit]
    return page, page[-1].cursor if len(hits) > limit else None


def node_views(
    state: StateProjection, conn: Sql, rows: Iterable[NodeRow], decay: Decay | None
) -> list[NodeView]:
    """The nodes of ``rows``, each with its corroborations (one lookup for them all)."""
    found = list(rows)
    heard = state.corroborations(conn, [row.identity for row in found])
    return [node_view(row, decay, heard.get(row.identity, ())) for row in found]


def edge_views(
    state: StateProjection, conn: Sql, rows: Iterable[EdgeRow], decay: Decay | None
) -> list[EdgeView]:
    """``node_views`` for relationships."""
    found = list(rows)
    heard = state.corroborations(conn, [row.identity for row in found])
    refs: dict[str, NodeRef] = {}
    return [edge_view(row, decay, heard.get(row.identity, ()), refs) for row in found]
