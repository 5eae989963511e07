"""How each event changes the state tables: ``SET n += changes`` semantics, stubs, removal.

The one definition of the state model's rules; the JSONL model (``projections.jsonl_model``)
follows the same ones and a test compares the two on a full history.
"""

from __future__ import annotations

from typing import Any

import orjson

from writegate.eventlog import EventCore, canonical_json
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sql import Sql, inserted, sent
from writegate.language import (
    FeedbackGiven,
    NodeCorroborated,
    NodeDeleted,
    NodeRef,
    NodesIndexed,
    NodesMerged,
    NodesUnmerged,
    NodeWritten,
    ObservationRecorded,
    ProposalDecided,
    RelationshipCorroborated,
    RelationshipDeleted,
    RelationshipWritten,
    SourceRetracted,
    SourceUnretracted,
    WriteProposed,
    payload_of,
    writer_of,
)
from writegate.projections.state import (
    blocking,
    feedback,
    merging,
    observations,
    remembered,
    retracting,
    scoping,
    searchable,
    support,
    tallies,
    valuecounts,
)
from writegate.projections.state.tables import (
    UPSERT_FACT,
    UPSERT_NODE,
    UPSERT_NODE_TEXT,
    UPSERT_RELATIONSHIP,
)


def merge_properties(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``SET n += $changes``: a null value removes the property, as in Cypher."""
    merged = dict(current)
    for name, value in changes.items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    return merged


def _text(value: Any) -> str:
    return canonical_json(value).decode()


def _stamp(event: EventCore, by: str) -> tuple[str, int, str, str]:
    return (
        _text(event.provenance),
        event.seq,
        format_timestamp(event.occurred_at),
        by,
    )


def _record_facts(
    conn: Sql, event: EventCore, identity: str, changes: dict[str, Any], by: str
) -> None:
    """Who set each value now held (``by``: ``language.writer_of``): the provenance a later
    change is compared with."""
    provenance = _text(event.provenance)
    for name, value in changes.items():
        if value is None:
            sent(
                conn,
                "DELETE FROM state_facts WHERE identity = ? AND property = ?",
                (identity, name),
            )
        else:
            inserted(conn, UPSERT_FACT, [(identity, name, event.seq, by, provenance)])


def _forget(conn: Sql, table: str, identity: str) -> None:
    if table == "state_nodes":
        row = remembered.node_row(conn, identity)
        if row is not None:
            tallies.node(conn, (str(row[remembered.LABEL]), bool(row[remembered.STUB])), None)
            old = blocking.stored_keys(row[remembered.RESOLUTION_KEYS])
            valuecounts.rekey(conn, [], old or [])
            blocking.store_keys(conn, identity, old, None)
        remembered.wrote_node(conn, identity, None)
    else:
        row = conn.execute(
            "SELECT type FROM state_relationships WHERE identity = ?", (identity,)
        ).fetchone()
        if row is not None:
            tallies.relationship(conn, str(row[0]), None)
    conn.execute(f"DELETE FROM {table} WHERE identity = ?", (identity,))
    conn.execute("DELETE FROM state_facts WHERE identity = ?", (identity,))
    support.forget(conn, identity)


def _index(conn: Sql, identity: str, keys: list[str], old: list[str] | None) -> None:
    """The node's blocking keys, as its latest write computed them (already made this
    layout's by ``blocking.from_legacy``), in place of ``old`` — those its row listed (a
    node this write created has none: deleting and merging it away forgot them); the value
    counts follow (``valuecounts``)."""
    valuecounts.rekey(conn, keys, old or [])
    blocking.store_keys(conn, identity, old, keys)
    remembered.index_changed(conn)


def _reindexed(conn: Sql, identity: str, keys: list[str]) -> None:
    """A live node indexed anew by a schema change: its row lists ``keys`` now (a node
    gone since is not indexed)."""
    row = remembered.node_row(conn, identity)
    if row is None:
        return
    listed = _text(keys)
    conn.execute(
        "UPDATE state_nodes SET resolution_keys = ? WHERE identity = ?", (listed, identity)
    )
    at = remembered.RESOLUTION_KEYS
    remembered.wrote_node(conn, identity, (*row[:at], listed, *row[at + 1 :]))
    _index(conn, identity, keys, blocking.stored_keys(row[at]))


def _upsert_node(
    conn: Sql,
    event: EventCore,
    ref: NodeRef,
    changes: dict[str, Any],
    *,
    stub: bool,
    by: str,
    scope: str,
    texts: bool,
    indexed: list[str] | None = None,
    unsearchable: list[str] | None = None,
) -> list[str] | None:
    """Write the node's row (with its text, where ``texts``: ``nodetext``); the resolution
    keys it listed before (its row lists ``indexed`` now, or keeps its own if None; the
    same of ``unsearchable``)."""
    row = remembered.node_row(conn, ref.identity)
    before = (str(row[remembered.LABEL]), bool(row[remembered.STUB])) if row else None
    tallies.node(conn, before, (ref.label, stub))
    current = orjson.loads(row[remembered.PROPERTIES]) if row else {}
    properties = merge_properties({**current, **ref.keys}, changes)
    remapped_from = ref.remapped_from or (row[remembered.REMAPPED] if row else None)
    provenance, seq, at, by = _stamp(event, by)
    created = row[remembered.CREATED] if row else seq
    version = event.streams[ref.stream]
    keys, merged = _text(ref.keys), _text(properties)
    written: remembered.NodeTuple = (ref.identity, ref.label, keys, merged, provenance, version)
    old = row[remembered.RESOLUTION_KEYS] if row else None
    listed = _text(indexed) if indexed is not None else old
    hidden = searchable.listed(unsearchable, row[remembered.UNSEARCHABLE] if row else None)
    written += (int(stub), remapped_from, created, seq, at, by, scope, listed, hidden)
    if texts:  # its document too, in the same statement
        text = searchable.text_of(ref.label, properties, hidden)
        inserted(conn, UPSERT_NODE_TEXT, [(*written, text)])
        if row is not None and row[remembered.SCOPE] != scope:
            scoping.rescope(conn, ref.identity)
    else:
        inserted(conn, UPSERT_NODE, [written])
    remembered.wrote_node(conn, ref.identity, written)
    return blocking.stored_keys(old)


def _relationship_written(
    conn: Sql, event: EventCore, written: RelationshipWritten, by: str, texts: bool
) -> None:
    for stub in written.stubs_created:
        if remembered.node_row(conn, stub.identity) is None:
            scope = scoping.stub_scope(written, stub.identity)
            keys = (written.stub_keys or {}).get(stub.identity)
            keys = blocking.from_legacy(keys) if keys is not None else None
            old = _upsert_node(
                conn, event, stub, {}, stub=True, by=by, scope=scope, texts=texts, indexed=keys
            )
            if keys is not None:
                _index(conn, stub.identity, keys, old)
    row = conn.execute(
        "SELECT properties, remapped_from, created_seq, type FROM state_relationships "
        "WHERE identity = ?",
        (written.identity,),
    ).fetchone()
    tallies.relationship(conn, str(row[3]) if row else None, written.type)
    properties = merge_properties(orjson.loads(row[0]) if row else {}, written.properties)
    provenance, seq, at, by = _stamp(event, by)
    conn.execute(
        UPSERT_RELATIONSHIP,
        (
            written.identity,
            written.type,
            written.from_node.identity,
            written.to_node.identity,
            _text(properties),
            provenance,
            event.streams[written.stream],
            written.remapped_from or (row[1] if row else None),
            row[2] if row else seq,
            seq,
            at,
            by,
        ),
    )


def apply_to_state(conn: Sql, event: EventCore, *, texts: bool) -> None:
    """One event's effect on the state tables (events that change no graph: none but
    the review queue's, the aliases' and the feedback weights'); ``texts``: node rows hold
    their text (``nodetext``)."""
    match payload_of(event):
        case NodeWritten() as written:
            by = writer_of(event, written)
            scope = scoping.written_scope(conn, written)
            keys = written.resolution_keys
            keys = blocking.from_legacy(keys) if keys is not None else None
            old = _upsert_node(
                conn,
                event,
                written.node,
                written.properties,
                stub=False,
                by=by,
                scope=scope,
                texts=texts,
                indexed=keys,
                unsearchable=written.unsearchable,
            )
            _record_facts(conn, event, written.node.identity, written.properties, by)
            valid = (written.valid_from, written.valid_to)
            version = event.streams[written.node.stream]
            support.written(conn, event, written.node.identity, version, by, valid)
            observations.cite(conn, event, written.node.identity, "node")
            if keys is not None:
                _index(conn, written.node.identity, keys, old)
        case RelationshipWritten() as written:
            by = writer_of(event, written)
            _relationship_written(conn, event, written, by, texts)
            _record_facts(conn, event, written.identity, written.properties, by)
            valid = (written.valid_from, written.valid_to)
            version = event.streams[written.stream]
            support.written(conn, event, written.identity, version, by, valid)
            observations.cite(conn, event, written.identity, "relationship")
        case NodeDeleted(node=node):
            _forget(conn, "state_nodes", node.identity)
        case RelationshipDeleted(identity=identity):
            _forget(conn, "state_relationships", identity)
        case NodeCorroborated() | RelationshipCorroborated() as corroboration:
            support.corroborated(conn, event, corroboration)
            if isinstance(corroboration, NodeCorroborated):  # what it cited, as a write's
                observations.cite(conn, event, corroboration.subject, "node")
            else:
                observations.cite(conn, event, corroboration.subject, "relationship")
        case WriteProposed(proposal=proposal):  # applied again (at-least-once): as it was
            conn.execute(
                "INSERT INTO state_proposals (proposal, seq, status) VALUES (?, ?, 'pending') "
                "ON CONFLICT DO NOTHING",
                (proposal, event.seq),
            )
        case ProposalDecided(proposal=proposal, decision=decision, writer=writer):
            decided = conn.execute(
                "UPDATE state_proposals SET status = ?, decided_seq = ? "
                "WHERE proposal = ? AND status = 'pending'",
                (decision, event.seq, proposal),
            ).rowcount
            if decided and decision == "approved":  # once, however often applied;
                conn.execute(  # the writer's (an older approval's actor was the writer)
                    "INSERT INTO state_approved_agents (agent, approved) VALUES (?, 1) "
                    "ON CONFLICT (agent) DO UPDATE "
                    "SET approved = state_approved_agents.approved + 1",
                    (writer or event.actor.agent,),
                )
        case NodesIndexed(nodes=nodes):
            for entry in nodes:
                if entry.resolution_keys is not None:  # None: a forgotten person's
                    _reindexed(conn, entry.node.identity, entry.resolution_keys)
        case NodesMerged() as merge:
            merging.merged(conn, merge)
        case NodesUnmerged() as unmerge:
            merging.unmerged(conn, unmerge)
        case FeedbackGiven() as given:
            feedback.given(conn, event, given)
        case ObservationRecorded() as observed:
            observations.recorded(conn, event, observed)
        case SourceRetracted() | SourceUnretracted() as retraction:
            retracting.applied(conn, retraction, texts=texts)
        case _:
            pass
