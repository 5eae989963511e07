"""Planning a merge of two nodes, and its undoing, as events — nothing deleted, nothing lost.

A merge re-draws each relationship of the duplicate at the survivor (ending the old one,
``moved_to`` naming the new), writes onto the survivor the duplicate's values it takes,
deletes the duplicate (``merged_into``) and closes with ``nodes.merged``, which records
the before-image. Which value the survivor keeps where both hold one is the property's
conflict policy, applied as if both nodes' writes had landed on one node:

- ``supersede``: the later-written value (by log position) wins;
- ``keep_higher_confidence`` (and ``review``: a merge is itself a reviewer's act): the
  value written at the higher confidence wins, the survivor's on a tie;
- ``reject``: the merge is refused with ``CONFLICT`` naming both values.

A functional relationship the survivor already has, of the type of one the duplicate
would bring, refuses the merge (``CONFLICT``): which to keep is a decision, not a rule.
An unmerge replays the before-image backwards: the duplicate, its relationships and who
set each value come back; survivor values written since the merge stay (``kept``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from writegate.eventlog import Transaction
from writegate.eventlog.sql import Sql
from writegate.gate.checks import check_properties
from writegate.gate.conflicts import superseded_value
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.schema.registry import RelationshipEntry, SchemaEntry, SchemaRegistry
from writegate.language import (
    FactRecord,
    MovedRelationship,
    NodeDeleted,
    NodeRef,
    NodesMerged,
    NodesUnmerged,
    NodeWritten,
    RelationshipDeleted,
    RelationshipWritten,
    Superseded,
    WriteProvenance,
    draft,
    relationship_identity,
)
from writegate.projections.state import EdgeRow, NodeRow, StateReader

Entry = SchemaEntry | RelationshipEntry


@dataclass
class Combined:
    """The values one side takes from the other, and what they replace."""

    set: dict[str, Any] = field(default_factory=dict)
    replaced: dict[str, Any] = field(default_factory=dict)  # None: was absent
    superseded: list[Superseded] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the survivor's value stayed


def combine(
    state: StateReader,
    conn: Sql,
    held: NodeRow | EdgeRow,
    incoming: Mapping[str, Any],
    incoming_identity: str,
    entry: Entry | None,
    skip: frozenset[str] = frozenset(),
) -> Combined:
    """What ``held`` takes of ``incoming``'s values, by each property's conflict policy."""
    out = Combined()
    differing = [
        name
        for name, value in incoming.items()
        if name not in skip and name in held.properties and held.properties[name] != value
    ]
    mine = state.facts(conn, held.identity, differing)
    theirs = state.facts(conn, incoming_identity, differing)
    refused: list[dict[str, Any]] = []
    for name, value in incoming.items():
        if name in skip or held.properties.get(name) == value:
            continue
        if name not in held.properties:
            out.set[name], out.replaced[name] = value, None
            continue
        old = held.properties[name]
        spec = entry.properties.get(name) if entry is not None else None
        if spec is not None and spec.many and isinstance(old, list) and isinstance(value, list):
            out.set[name] = old + [v for v in value if v not in old]
            out.replaced[name] = old
            continue
        policy = (spec.conflict if spec is not None else None) or (
            entry.conflict if entry is not None else "supersede"
        )
        ours, other = mine.get(name), theirs.get(name)
        if policy == "reject":
            refused.append({"property": name, "survivor": old, "duplicate": value})
            continue
        if policy == "supersede":
            wins = (other.seq if other else 0) > (ours.seq if ours else held.updated_seq)
        else:  # keep_higher_confidence, review
            wins = _confidence(other) > _confidence(ours)
        if wins:
            out.set[name], out.replaced[name] = value, old
            out.superseded.append(superseded_value(held, ours, name, old))
        else:
            out.kept.append(name)
    if refused:
        raise GateRejection(
            ErrorCode.CONFLICT,
            f"{held.identity} and {incoming_identity} hold different values of "
            f"{', '.join(r['property'] for r in refused)} and the schema refuses to choose "
            "(conflict: reject); make them agree first",
            {"subject": held.identity, "conflicts": refused},
        )
    return out


def _confidence(fact: Any) -> float:
    return fact.provenance.confidence if fact is not None and fact.provenance else 0.0


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
    props = combine(state, conn, survivor, dup.properties, dup.identity, m.entry,
                    frozenset(survivor.keys))  # fmt: skip
    # what a duplicate of another label of the group brings must fit the survivor's label
    check_properties(props.set, m.entry.properties, m.entry.additional_properties, s_ref.label)
    facts = state.fact_records(conn, dup.identity)
    facts += _before(state.fact_records(conn, survivor.identity), props.replaced)
    dup_facts = {f.property: f for f in state.fact_records(conn, dup.identity)}
    carried = [_as(dup_facts[n], survivor.identity) for n in props.set if n in dup_facts]
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
        facts += state.fact_records(conn, identity)
        absorbed = new in landed or state.relationship(conn, new)
        if not absorbed:
            landed[new] = dict(edge.properties)
            carried += [_as(f, new) for f in state.fact_records(conn, identity)]
            record = MovedRelationship(
                identity=identity, type=edge.type, from_identity=edge.from_identity,
                to_identity=edge.to_identity, properties=edge.properties,
                provenance=edge.provenance, moved_to=new, created=True,
            )  # fmt: skip
            moves.append((edge, record, None))
            continue
        target = state.relationship(conn, new)
        current = landed.get(new, target.properties if target else {})
        holder = _edge_holding(new, edge, start, end, current, target)
        taken = combine(state, conn, holder, edge.properties, identity, entry)
        landed[new] = {**current, **taken.set}
        old = {f.property: f for f in state.fact_records(conn, identity)}
        carried += [_as(old[n], new) for n in taken.set if n in old]
        if target is not None:
            facts += _before(state.fact_records(conn, new), taken.replaced)
        record = MovedRelationship(
            identity=identity, type=edge.type, from_identity=edge.from_identity,
            to_identity=edge.to_identity, properties=edge.properties,
            provenance=edge.provenance, moved_to=new, created=False, replaced=taken.replaced,
            set=taken.set, target_provenance=target.provenance if target else None,
        )  # fmt: skip
        moves.append((edge, record, taken))
    request, provenance = m.request, m.provenance

    def emit(payload: Any, stream: str, claim: WriteProvenance | None = None) -> None:
        tx.emit(draft(payload, [stream], provenance=claim or provenance, request=request))

    for edge, record, _ in moves:
        ended = RelationshipDeleted(
            identity=edge.identity, type=edge.type, from_identity=edge.from_identity,
            to_identity=edge.to_identity, cascade_of=None, moved_to=record.moved_to,
        )  # fmt: skip
        emit(ended, ended.stream)
    if props.set:
        written = NodeWritten(
            node=s_ref, properties=props.set, created=False, stub_resolved=survivor.stub,
            superseded=props.superseded or None,
            resolution_keys=m.index({**survivor.properties, **props.set}),
        )  # fmt: skip
        emit(written, s_ref.stream)
    for edge, record, absorbing in moves:
        if absorbing is not None and not absorbing.set:
            continue
        head = s_ref if edge.from_identity == dup.identity else NodeRef.parse(edge.from_identity)
        tail = s_ref if edge.to_identity == dup.identity else NodeRef.parse(edge.to_identity)
        redrawn = RelationshipWritten(
            identity=record.moved_to, type=edge.type, remapped_from=None, from_node=head,
            to_node=tail, properties=edge.properties if absorbing is None else absorbing.set,
            created=absorbing is None, stubs_created=[],
            superseded=(absorbing.superseded or None) if absorbing is not None else None,
        )  # fmt: skip
        # a re-drawn relationship is still its writer's claim; what it absorbed, the merge's
        emit(redrawn, redrawn.stream, edge.provenance if absorbing is None else None)
    emit(NodeDeleted(node=d_ref, detached=[], merged_into=survivor.identity), d_ref.stream)
    closing = NodesMerged(
        merge=m.merge, survivor=s_ref, merged=d_ref, reason=m.reason,
        properties=dup.properties, merged_provenance=dup.provenance,
        survivor_provenance=survivor.provenance, replaced=props.replaced, set=props.set,
        relationships=[record for _, record, _ in moves],
        aliases=state.aliases_to(conn, dup.identity),
        resolution_keys=state.resolution_keys_of(conn, dup.identity) or None,
        facts=facts, carried=carried,
    )  # fmt: skip
    tx.emit(draft(closing, [closing.stream], provenance=provenance, request=request,
                  expected={closing.stream: 0}))  # fmt: skip
    return closing


def _before(facts: list[FactRecord], replaced: Mapping[str, Any]) -> list[FactRecord]:
    """Who had set the values a merge replaces (an unmerge restores them)."""
    return [f for f in facts if replaced.get(f.property) is not None]


def _as(fact: FactRecord, identity: str) -> FactRecord:
    return fact.model_copy(update={"identity": identity})


def _edge_holding(
    new: str, edge: EdgeRow, start: str, end: str, current: dict[str, Any], held: EdgeRow | None
) -> EdgeRow:
    """The relationship ``new`` as the merge has made it so far (a row to combine into)."""
    if held is not None and held.properties == current:
        return held
    base = held or edge
    return EdgeRow(new, edge.type, start, end, current, base.provenance, base.version,
                   None, base.updated_seq, base.updated_at, base.updated_by)  # fmt: skip


def _functional(
    state: StateReader,
    conn: Sql,
    survivor: str,
    rtype: str,
    new: str,
    moving: set[str],
    landed: Mapping[str, Any],
) -> None:
    others = [e.identity for e in state.edges_from(conn, survivor, rtype)
              if e.identity != new and e.identity not in moving]  # fmt: skip
    others += [i for i in landed if i != new and i.startswith(f"({survivor})-[{rtype}]->")]
    if others:
        raise GateRejection(
            ErrorCode.CONFLICT,
            f"{rtype} is functional and {survivor} already has {others[0]}; the merge would "
            f"give it a second ({new}): end one of them first",
            {"subject": survivor, "type": rtype, "held": others, "incoming": new},
        )


def emit_unmerge(
    state: StateReader,
    tx: Transaction,
    merged: NodesMerged,
    reason: str,
    provenance: WriteProvenance,
    request: dict[str, Any],
) -> NodesUnmerged:
    """Emit the undoing of ``merged`` into ``tx``; returns its closing record."""
    conn = tx.conn
    survivor = state.node(conn, merged.survivor.identity)
    if survivor is None:
        raise _cannot(merged, f"its survivor {merged.survivor.identity} no longer exists")
    restored = merged.merged
    if state.node_exists(conn, restored.identity):
        raise _cannot(merged, f"{restored.identity} exists again")
    for moved in merged.relationships:
        for end in (moved.from_identity, moved.to_identity):
            if end != restored.identity and not state.node_exists(conn, end):
                raise _cannot(merged, f"{moved.identity} would end at {end}, deleted since")

    def emit(payload: Any, stream: str, claim: WriteProvenance | None) -> None:
        """Append one event; what it restores is stamped with the claim it restores."""
        tx.emit(draft(payload, [stream], provenance=claim or provenance, request=request))

    back = {k: v for k, v in merged.properties.items() if k not in restored.keys}
    emit(NodeWritten(node=restored, properties=back, created=True, stub_resolved=False,
                     resolution_keys=merged.resolution_keys), restored.stream,
         merged.merged_provenance)  # fmt: skip
    revert, kept = _revert(survivor.properties, merged.replaced, merged.set)
    if revert:
        s_ref = NodeRef.of(survivor.label, survivor.keys)
        emit(NodeWritten(node=s_ref, properties=revert, created=False, stub_resolved=False),
             s_ref.stream, merged.survivor_provenance)  # fmt: skip
    facts = [f for f in merged.facts if f.identity != survivor.identity or f.property in revert]
    for moved in reversed(merged.relationships):
        now = state.relationship(conn, moved.moved_to)
        if now is None and moved.created:  # deleted since the merge: it stays deleted
            kept.append(moved.identity)
            facts = [f for f in facts if f.identity != moved.identity]
            continue
        if now is not None and moved.created:
            gone = RelationshipDeleted(identity=now.identity, type=now.type,
                                       from_identity=now.from_identity,
                                       to_identity=now.to_identity, cascade_of=None)  # fmt: skip
            emit(gone, gone.stream, None)
        elif now is not None:
            undo, _ = _revert(now.properties, moved.replaced, moved.set)
            facts = [f for f in facts if f.identity != now.identity or f.property in undo]
            if undo:
                undone = _redraw(now.identity, now.type, now.from_identity, now.to_identity,
                                 undo, created=False)  # fmt: skip
                emit(undone, undone.stream, moved.target_provenance)
        back_edge = _redraw(moved.identity, moved.type, moved.from_identity, moved.to_identity,
                            moved.properties, created=True)  # fmt: skip
        emit(back_edge, back_edge.stream, moved.provenance)
    closing = NodesUnmerged(
        merge=merged.merge, survivor=survivor.identity, restored=restored, reason=reason,
        aliases=merged.aliases, facts=facts, kept=kept,
    )  # fmt: skip
    tx.emit(draft(closing, [closing.stream], provenance=provenance, request=request,
                  expected={closing.stream: 1}))  # fmt: skip
    return closing


def _redraw(
    identity: str, rtype: str, start: str, end: str, properties: dict[str, Any], *, created: bool
) -> RelationshipWritten:
    return RelationshipWritten(
        identity=identity, type=rtype, remapped_from=None, from_node=NodeRef.parse(start),
        to_node=NodeRef.parse(end), properties=properties, created=created, stubs_created=[],
    )  # fmt: skip


def _revert(
    now: Mapping[str, Any], replaced: Mapping[str, Any], set_: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The values to put back (None removes), and those written since the merge (kept)."""
    revert: dict[str, Any] = {}
    kept: list[str] = []
    for name, before in replaced.items():
        if now.get(name) == set_.get(name):
            revert[name] = before
        else:
            kept.append(name)
    return revert, kept


def _cannot(merged: NodesMerged, why: str) -> GateRejection:
    return GateRejection(
        ErrorCode.MERGE_NOT_UNDOABLE,
        f"merge {merged.merge} cannot be undone: {why}",
        {"merge": merged.merge, "survivor": merged.survivor.identity},
    )
