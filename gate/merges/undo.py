"""Undoing a merge as events: the before-image ``nodes.merged`` recorded, replayed backwards.

The duplicate, its relationships and who set each value come back; survivor values
written since the merge stay (``kept``), and a relationship deleted since stays deleted.
An unmerge that cannot be exact is refused (``MERGE_NOT_UNDOABLE``), never approximated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from writegate.eventlog import Transaction
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.language import (
    FactRecord,
    NodeRef,
    NodesMerged,
    NodesUnmerged,
    NodeWritten,
    RelationshipDeleted,
    RelationshipWritten,
    WriteProvenance,
    draft,
)
from writegate.projections.state import StateReader


def emit_unmerge(
    state: StateReader,
    tx: Transaction,
    merged: NodesMerged,
    reason: str,
    provenance: WriteProvenance,
    request: dict[str, Any],
    unsearchable: list[str],
) -> NodesUnmerged:
    """Emit the undoing of ``merged`` into ``tx``; returns its closing record (the node it
    gives back keeps ``unsearchable`` out of the text index, as its label does now)."""
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

    def by(agent: str | None, claim: WriteProvenance | None, identity: str) -> str | None:
        """Whose write a restoring event gives back: the agent the merge recorded (for an
        older merge, the writer of the value set last), with that agent's claim."""
        return (agent or _last_writer(merged.facts, identity)) if claim is not None else None

    back = {k: v for k, v in merged.properties.items() if k not in restored.keys}
    emit(
        NodeWritten(
            node=restored,
            properties=back,
            created=True,
            stub_resolved=False,
            resolution_keys=merged.resolution_keys,
            unsearchable=unsearchable or None,
            written_by=by(merged.merged_agent, merged.merged_provenance, restored.identity),
        ),
        restored.stream,
        merged.merged_provenance,
    )
    revert, kept = _revert(survivor.properties, merged.replaced, merged.set)
    if revert:
        s_ref = NodeRef.of(survivor.label, survivor.keys)
        claim = merged.survivor_provenance
        emit(
            NodeWritten(
                node=s_ref,
                properties=revert,
                created=False,
                stub_resolved=False,
                written_by=by(merged.survivor_agent, claim, survivor.identity),
            ),
            s_ref.stream,
            claim,
        )
    facts = [f for f in merged.facts if f.identity != survivor.identity or f.property in revert]
    for moved in reversed(merged.relationships):
        now = state.relationship(conn, moved.moved_to)
        if now is None and moved.created:  # deleted since the merge: it stays deleted
            kept.append(moved.identity)
            facts = [f for f in facts if f.identity != moved.identity]
            continue
        if now is not None and moved.created:
            gone = RelationshipDeleted(
                identity=now.identity,
                type=now.type,
                from_identity=now.from_identity,
                to_identity=now.to_identity,
                cascade_of=None,
            )
            emit(gone, gone.stream, None)
        elif now is not None:
            undo, _ = _revert(now.properties, moved.replaced, moved.set)
            facts = [f for f in facts if f.identity != now.identity or f.property in undo]
            if undo:
                claim = moved.target_provenance
                undone = _redraw(
                    now.identity,
                    now.type,
                    now.from_identity,
                    now.to_identity,
                    undo,
                    created=False,
                    written_by=by(moved.target_agent, claim, now.identity),
                )
                emit(undone, undone.stream, claim)
        back_edge = _redraw(
            moved.identity,
            moved.type,
            moved.from_identity,
            moved.to_identity,
            moved.properties,
            created=True,
            written_by=by(moved.agent, moved.provenance, moved.identity),
        )
        emit(back_edge, back_edge.stream, moved.provenance)
    closing = NodesUnmerged(
        merge=merged.merge,
        survivor=survivor.identity,
        restored=restored,
        reason=reason,
        aliases=merged.aliases,
        facts=facts,
        kept=kept,
    )
    tx.emit(
        draft(
            closing,
            [closing.stream],
            provenance=provenance,
            request=request,
            expected={closing.stream: 1},
        )
    )
    return closing


def _redraw(
    identity: str,
    rtype: str,
    start: str,
    end: str,
    properties: dict[str, Any],
    *,
    created: bool,
    written_by: str | None,
) -> RelationshipWritten:
    return RelationshipWritten(
        identity=identity,
        type=rtype,
        remapped_from=None,
        from_node=NodeRef.parse(start),
        to_node=NodeRef.parse(end),
        properties=properties,
        created=created,
        stubs_created=[],
        written_by=written_by,
    )


def _last_writer(facts: list[FactRecord], identity: str) -> str | None:
    """The agent who set a value of ``identity`` last (None: it held none)."""
    held = [f for f in facts if f.identity == identity]
    return max(held, key=lambda f: f.seq).agent if held else None


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
