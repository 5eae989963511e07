"""The graph as it stood: a node and its relationships at a record time (``--as-of``, what
the log said then) or at a valid time (``--valid-at``, what was true then, as known at the
record time) — the answers of ``show node``, ``show relationship`` and the MCP reads' ``as_of``
/ ``valid_at``, rebuilt from the log by ``gate.reads.timeline``. Reads only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Event, Log
from writegate.eventlog.events import format_timestamp, parse_timestamp
from writegate.gate.reads.past_scopes import PastScopes
from writegate.gate.reads.timeline import (
    Spell,
    State,
    node_at,
    relationship_at,
    stub_keys,
    touching,
    touching_many,
)
from writegate.gate.reads.views import (
    EdgeView,
    NodeView,
    Subgraph,
    provenance_of_event,
    ref_of,
    supported,
)
from writegate.language import (
    Authority,
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipWritten,
    node_stream,
    payload_of,
    provenance_of,
    writer_of,
)
from writegate.projections.state import StateProjection, Support, merge_properties

_OUT = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class RelationshipAsOf(BaseModel):
    """A relationship at one time: its valid interval as known then, and its last write."""

    model_config = _OUT

    identity: str
    type: str | None  # (None: the log never held it)
    from_node: str | None = Field(serialization_alias="from")
    to_node: str | None = Field(serialization_alias="to")
    state: State
    properties: dict[str, Any]
    valid_from: str | None  # stated, else its first write's record time
    valid_to: str | None  # stated, or when a deletion or a successor ended it (None: open)
    superseded_by: str | None  # the functional relationship that replaced it
    version: int
    last_seq: int | None
    last_agent: str | None
    last_source: str | None
    confidence: float | None
    # its corroborations heard by then, as the other reads show them (``views.supported``)
    corroborated_confidence: float | None = Field(default=None, exclude_if=lambda v: v is None)
    sources: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    # its last write's authority (``gate.authority``; left out: nothing ranked)
    authority: Authority | None = Field(default=None, exclude_if=lambda v: v is None)


class NodeAsOf(BaseModel):
    model_config = _OUT

    identity: str
    as_of: str  # record time: what the log knew then
    # valid time: what was true then (left out when the question was record time alone)
    valid_at: str | None = Field(default=None, exclude_if=lambda v: v is None)
    state: State
    version: int
    properties: dict[str, Any]
    stub: bool
    last_seq: int | None
    last_agent: str | None
    last_source: str | None
    confidence: float | None
    corroborated_confidence: float | None = Field(default=None, exclude_if=lambda v: v is None)
    sources: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    authority: Authority | None = Field(default=None, exclude_if=lambda v: v is None)
    relationships: list[RelationshipAsOf] = []  # those present then, starting or ending here


def node_then(
    log: Log,
    identity: str,
    *,
    as_of: datetime,
    valid_at: datetime | None = None,
    state: StateProjection | None = None,
) -> NodeAsOf:
    """The node and its relationships at record time ``as_of`` or, given ``valid_at``, as
    true then (as known at ``as_of``). Given the ``state``, a record-time answer carries the
    corroborations heard by then of the versions it shows, as the other reads do (the state
    keeps those of a fact's current version only)."""
    with log.snapshot() as conn:
        state_then, properties, stub, version, last = _node(log, identity, as_of, valid_at)
        relationships = (
            [
                seen
                for rid in touching(log, identity, as_of)
                if (seen := relationship_then(log, rid, as_of=as_of, valid_at=valid_at)).state
                == "present"
            ]
            if state_then == "present"
            else []
        )
        heard: dict[str, list[Support]] = {}
        if state is not None and valid_at is None and state_then == "present":
            heard = state.corroborations(conn, [identity, *(r.identity for r in relationships)])
    provenance = provenance_of(last) if last else None
    source = provenance.source if provenance else None
    return NodeAsOf(
        identity=identity,
        as_of=format_timestamp(as_of),
        valid_at=format_timestamp(valid_at) if valid_at else None,
        state=state_then,
        version=version,
        properties=properties,
        stub=stub,
        last_seq=last.seq if last else None,
        last_agent=writer_of(last, payload_of(last)) if last else None,
        last_source=source,
        confidence=provenance.confidence if provenance else None,
        authority=provenance.authority if provenance else None,
        relationships=[
            r.model_copy(update=_heard_by(r.last_source, heard.get(r.identity), r.version, as_of))
            for r in relationships
        ],
        **_heard_by(source, heard.get(identity), version, as_of),
    )


def _heard_by(
    source: str | None, heard: list[Support] | None, version: int, as_of: datetime
) -> dict[str, Any]:
    """``views.supported`` of the corroborations of ``version`` heard by ``as_of``."""
    then = [
        s for s in heard or () if s.version == version and parse_timestamp(s.occurred_at) <= as_of
    ]
    return supported(source, then)


Then = tuple[State, dict[str, Any], bool, int, Event | None]


def _node(log: Log, identity: str, as_of: datetime, valid_at: datetime | None) -> Then:
    """State, properties, stub, version and last event of the node then."""
    if valid_at is None:
        return _recorded(log, identity, as_of)
    node = node_at(log, identity, valid_at=valid_at, as_of=as_of)
    return node.state, node.properties, node.stub, node.version, node.last


def _recorded(log: Log, identity: str, moment: datetime) -> Then:
    """The node as its own stream left it at ``moment``: state, properties, stub, version,
    last event."""
    state: State = "absent"
    properties: dict[str, Any] = {}
    version, stub, last = 0, False, None
    stream = node_stream(identity)
    for event in log.iter_events(stream=stream, until=moment):
        version, last = event.streams[stream], event
        match payload_of(event):
            case NodeWritten(node=node, properties=changes):
                base = properties if state == "present" else {}
                properties = merge_properties({**base, **node.keys}, changes)
                state, stub = "present", False
            case RelationshipWritten() as written:
                properties, state, stub = stub_keys(written, identity), "present", True
            case NodeDeleted():
                properties, state, stub = {}, "deleted", False
            case _:
                pass
    return state, properties, stub, version, last


def relationship_then(
    log: Log, identity: str, *, as_of: datetime, valid_at: datetime | None = None
) -> RelationshipAsOf:
    """One relationship at record time ``as_of`` or, given ``valid_at``, as true then (a
    deleted one: its last spell, as it ended)."""
    state, spell = relationship_at(log, identity, as_of=as_of, valid_at=valid_at)
    if spell is None:
        return _missing(identity, state)
    provenance = provenance_of(spell.last)
    return RelationshipAsOf(
        identity=identity,
        type=spell.type,
        from_node=spell.from_identity,
        to_node=spell.to_identity,
        state=state,
        properties=spell.properties,
        valid_from=format_timestamp(spell.valid_from),
        valid_to=format_timestamp(spell.valid_to) if spell.valid_to else None,
        superseded_by=spell.superseded_by,
        version=spell.version,
        last_seq=spell.last.seq,
        last_agent=writer_of(spell.last, payload_of(spell.last)),
        last_source=provenance.source if provenance else None,
        confidence=provenance.confidence if provenance else None,
        authority=provenance.authority if provenance else None,
    )


def _missing(identity: str, state: State) -> RelationshipAsOf:
    return RelationshipAsOf(
        identity=identity,
        type=None,
        from_node=None,
        to_node=None,
        state=state,
        properties={},
        valid_from=None,
        valid_to=None,
        superseded_by=None,
        version=0,
        last_seq=None,
        last_agent=None,
        last_source=None,
        confidence=None,
    )


def subgraph_then(
    log: Log,
    identities: list[str],
    *,
    as_of: datetime,
    valid_at: datetime | None,
    cap: int,
    scopes: PastScopes | None = None,
) -> Subgraph:
    """``open_nodes`` at a past time: the nodes present then, their relationships then (at
    most ``cap``, else ``truncated``) with their valid time, and the nodes at their other
    ends (one with no fact valid at ``valid_at`` as the log knew it at ``as_of``). Given
    a caller's ``scopes``, only the nodes in them then, and what was withheld."""
    nodes: dict[str, NodeView] = {}
    edges: dict[str, EdgeView] = {}
    truncated = False
    with log.snapshot():
        for identity in identities:
            if scopes is not None and not scopes.sees(identity):
                continue
            if (view := node_view_then(log, identity, as_of, valid_at)) is not None:
                nodes[identity] = view
        touched = touching_many(log, list(nodes), as_of)
        for rid in dict.fromkeys(rid for rids in touched.values() for rid in rids):
            state, spell = relationship_at(log, rid, as_of=as_of, valid_at=valid_at)
            if state != "present" or spell is None:
                continue
            if scopes is not None and not all(
                scopes.sees(end) for end in (spell.from_identity, spell.to_identity)
            ):
                continue
            if len(edges) == cap:
                truncated = True
                break
            edges[rid] = _edge_view(spell)
            for end in (spell.from_identity, spell.to_identity):
                if end in nodes:
                    continue
                seen = node_view_then(log, end, as_of, valid_at)
                if seen is None and valid_at is not None:  # no fact valid then: as known then
                    seen = node_view_then(log, end, as_of, None)
                if seen is not None:
                    nodes[end] = seen
        withheld = scopes.withheld(nodes, valid_at) if scopes is not None else None
    return Subgraph(
        nodes=list(nodes.values()),
        edges=list(edges.values()),
        truncated=truncated,
        withheld=withheld,
    )


def node_view_then(
    log: Log, identity: str, as_of: datetime, valid_at: datetime | None
) -> NodeView | None:
    """The node as ``open_nodes`` shows it at that time, or None when it was not there."""
    state, properties, stub, version, last = _node(log, identity, as_of, valid_at)
    if state != "present" or last is None:
        return None
    written = payload_of(last)
    ref = NodeRef.parse(identity)
    keys = ref.keys or (written.node.keys if isinstance(written, NodeWritten) else {})
    return NodeView(
        label=ref.label,
        merge_keys=keys,  # a pseudonym names none: its write does
        properties=properties,
        version=version,
        stub=stub,
        remapped_from=written.node.remapped_from if isinstance(written, NodeWritten) else None,
        provenance=provenance_of_event(last),
    )


def _edge_view(spell: Spell) -> EdgeView:
    return EdgeView(
        type=spell.type,
        from_node=ref_of(spell.from_identity),
        to_node=ref_of(spell.to_identity),
        properties=spell.properties,
        version=spell.version,
        provenance=provenance_of_event(spell.last),
        valid_from=format_timestamp(spell.valid_from),
        valid_to=format_timestamp(spell.valid_to) if spell.valid_to else None,
    )


__all__ = [
    "NodeAsOf",
    "RelationshipAsOf",
    "Spell",
    "node_then",
    "node_view_then",
    "relationship_then",
    "subgraph_then",
]
