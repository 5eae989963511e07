"""Planning a merge of two nodes as events — nothing deleted, nothing lost.

A merge re-draws each relationship of the duplicate at the survivor (ending the old one,
``moved_to`` naming the new), writes onto the survivor the duplicate's values it takes (by
each property's conflict policy: ``gate.merges.values``), deletes the duplicate
(``merged_into``) and closes with ``nodes.merged``, which records the before-image that
``gate.merges.undo`` replays backwards.

A functional relationship the survivor already has, of the type of one the duplicate
would bring, refuses the merge (``CONFLICT``): which to keep is a decision, not a rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from writegate.eventlog import Transaction
from writegate.eventlog.sql import Sql
from writegate.gate.checks import check_properties
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.merges.values import Combined, before, combine, edge_holding, moved_fact
from writegate.gate.schema.registry import SchemaEntry, SchemaRegistry
from writegate.language import (
    MovedRelationship,
    NodeDeleted,
    NodeRef,
    NodesMerged,
    NodeWritten,
    RelationshipDeleted,
    RelationshipWritten,
    WriteProvenance,
    draft,
    relationship_identity,
)
from writegate.projections.state import EdgeRow, NodeRow, StateReader


@dataclass(frozen=True)
class MergeInput:
    merge: str
    survivor: NodeRow
    duplicate: NodeRow
    entry: SchemaEntry
    registry: SchemaRegistry
    reason: str
    provenance: WriteProvenance
    request: dict[str, Any]
    index: Callable[[Mapping[str, Any]], list[str] | None]  # a node's blocking keys


def emit_merge(state: StateReader, tx: Transaction, m: MergeInput) -> NodesMerged:
    """Emit the merge's events into ``tx``; returns its closing record."""
    conn = tx.conn
    survivor, dup = m.survivor, m.duplicate
    s_ref, d_ref = NodeRef.of(survivor.label, survivor.keys), NodeRef.of(dup.label, dup.keys)
    props = combine(
        state, conn, survivor, dup.properties, dup.identity, m.entry, frozenset(survivor.keys)
    )
    # what a duplicate of another label of the group brings must fit the survivor's label
    check_properties(props.set, m.entry.properties, m.entry.additional_properties, s_ref.label)
    facts = state.fact_records(conn, dup.identity)
    dup_facts = {f.property: f for f in facts}
    facts += before(state.fact_records(conn, survivor.identity), props.replaced)
    carried = [moved_fact(dup_facts[n], survivor.identity) for n in props.set if n in dup_facts]
    moved_ids = {a.identity for a in state.relationships_of(conn, dup.identity)}
    landed: dict[str, dict[str, Any]] = {}  # new identity -> its properties now
    moves: list[tuple[EdgeRow, MovedRelationship, Combined | None]] = []
    for identity in sorted(moved_ids):
        edge = state.relationship(conn, identity)
        if edge is None:
            continue
        start = survivor.identity if edge.from_identity == dup.identity else edge.from_identity
        end = survivor.identity if edge.to_identity == dup.identity else edge.to_identity
        new = relationship_identity(edge.type, start, end)
        entry = m.registry.get_relationship_type(edge.type)
        if entry is not None and entry.functional and start == survivor.identity:
            _functional(state, conn, survivor.identity, edge.type, new, moved_ids, landed)
        edge_facts = state.fact_records(conn, identity)
        facts += edge_facts
        target = state.relationship(conn, new)
        if new not in landed and target is None:
            landed[new] = dict(edge.properties)
            carried += [moved_fact(f, new) for f in edge_facts]
            moves.append((edge, _moved(edge, new, created=True), None))
            continue
        current = landed.get(new, target.properties if target else {})
        holder = edge_holding(new, edge, start, end, current, target)
        taken = combine(state, conn, holder, edge.properties, identity, entry)
        landed[new] = {**current, **taken.set}
        old = {f.property: f for f in edge_facts}
        carried += [moved_fact(old[n], new) for n in taken.set if n in old]
        if target is not None:
            facts += before(state.fact_records(conn, new), taken.replaced)
        record = _moved(
            edge,
            new,
            created=False,
            replaced=taken.replaced,
            set=taken.set,
            target_provenance=target.provenance if target else None,
            target_agent=target.updated_by if target else None,
        )
        moves.append((edge, record, taken))
    request, provenance = m.request, m.provenance

    def emit(payload: Any, stream: str, claim: WriteProvenance | None = None) -> None:
        tx.emit(draft(payload, [stream], provenance=claim or provenance, request=request))

    for edge, record, _ in moves:
        ended = RelationshipDeleted(
            identity=edge.identity,
            type=edge.type,
            from_identity=edge.from_identity,
            to_identity=edge.to_identity,
            cascade_of=None,
            moved_to=record.moved_to,
        )
        emit(ended, ended.stream)
    if props.set:
        written = NodeWritten(
            node=s_ref,
            properties=props.set,
            created=False,
            stub_resolved=survivor.stub,
            superseded=props.superseded or None,
            resolution_keys=m.index({**survivor.properties, **props.set}),
        )
        emit(written, s_ref.stream)
    for edge, record, absorbing in moves:
        if absorbing is not None and not absorbing.set:
            continue
        head = s_ref if edge.from_identity == dup.identity else NodeRef.parse(edge.from_identity)
        tail = s_ref if edge.to_identity == dup.identity else NodeRef.parse(edge.to_identity)
        redrawn = RelationshipWritten(
            identity=record.moved_to,
            type=edge.type,
            remapped_from=None,
            from_node=head,
            to_node=tail,
            properties=edge.properties if absorbing is None else absorbing.set,
            created=absorbing is None,
            stubs_created=[],
            superseded=(absorbing.superseded or None) if absorbing is not None else None,
            written_by=edge.updated_by if absorbing is None and edge.provenance else None,
        )
        # a re-drawn relationship is still its writer's claim; what it absorbed, the merge's
        emit(redrawn, redrawn.stream, edge.provenance if absorbing is None else None)
    emit(NodeDeleted(node=d_ref, detached=[], merged_into=survivor.identity), d_ref.stream)
    closing = NodesMerged(
        merge=m.merge,
        survivor=s_ref,
        merged=d_ref,
        reason=m.reason,
        properties=dup.properties,
        merged_provenance=dup.provenance,
        survivor_provenance=survivor.provenance,
        merged_agent=dup.updated_by,
        survivor_agent=survivor.updated_by,
        replaced=props.replaced,
        set=props.set,
        relationships=[record for _, record, _ in moves],
        aliases=state.aliases_to(conn, dup.identity),
        resolution_keys=state.resolution_keys_of(conn, dup.identity) or None,
        facts=facts,
        carried=carried,
    )
    tx.emit(
        draft(
            closing,
            [closing.stream],
            provenance=provenance,
            request=request,
            expected={closing.stream: 0},
        )
    )
    return closing


def _moved(edge: EdgeRow, new: str, *, created: bool, **absorbed: Any) -> MovedRelationship:
    """The record of ``edge`` re-drawn as ``new``: created there, or absorbed into the
    relationship already there (what it set, what that replaced, whose it was)."""
    return MovedRelationship(
        identity=edge.identity,
        type=edge.type,
        from_identity=edge.from_identity,
        to_identity=edge.to_identity,
        properties=edge.properties,
        provenance=edge.provenance,
        agent=edge.updated_by,
        moved_to=new,
        created=created,
        **absorbed,
    )


def _functional(
    state: StateReader,
    conn: Sql,
    survivor: str,
    rtype: str,
    new: str,
    moving: set[str],
    landed: Mapping[str, Any],
) -> None:
    others = [
        e.identity
        for e in state.edges_from(conn, survivor, rtype)
        if e.identity != new and e.identity not in moving
    ]
    others += [i for i in landed if i != new and i.startswith(f"({survivor})-[{rtype}]->")]
    if others:
        raise GateRejection(
            ErrorCode.CONFLICT,
            f"{rtype} is functional and {survivor} already has {others[0]}; the merge would "
            f"give it a second ({new}): end one of them first",
            {"subject": survivor, "type": rtype, "held": others, "incoming": new},
        )
