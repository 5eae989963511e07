"""The current-state read model: nodes and relationships as they stand now.

It lives in the log's own SQLite file and is updated inside each append's
transaction (an inline projector), so the gate's endpoint and version checks
read exactly what the log says. It is also an ordinary projection: it can be
reset and rebuilt from the log, and ``rebuilt_snapshot`` must equal ``snapshot``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import orjson

from writegate.eventlog import EventCore, EventLog, canonical_json
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sql import run_script
from writegate.language import (
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipDeleted,
    RelationshipWritten,
    payload_of,
)

_TABLES = """
CREATE TABLE IF NOT EXISTS state_nodes (
    identity TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    keys TEXT NOT NULL,
    properties TEXT NOT NULL,
    provenance TEXT NOT NULL,
    version INTEGER NOT NULL,
    stub INTEGER NOT NULL,
    remapped_from TEXT,
    created_seq INTEGER NOT NULL,
    updated_seq INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_relationships (
    identity TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    from_identity TEXT NOT NULL,
    to_identity TEXT NOT NULL,
    properties TEXT NOT NULL,
    provenance TEXT NOT NULL,
    version INTEGER NOT NULL,
    remapped_from TEXT,
    created_seq INTEGER NOT NULL,
    updated_seq INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS state_rel_from ON state_relationships (from_identity);
CREATE INDEX IF NOT EXISTS state_rel_to ON state_relationships (to_identity);
CREATE TABLE IF NOT EXISTS projection_checkpoints (
    name TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
);
"""
_NODE_COLUMNS = (
    "identity, label, keys, properties, provenance, version, stub, remapped_from, "
    "created_seq, updated_seq, updated_at, updated_by"
)
_REL_COLUMNS = (
    "identity, type, from_identity, to_identity, properties, provenance, version, "
    "remapped_from, created_seq, updated_seq, updated_at, updated_by"
)


@dataclass(frozen=True)
class NodeState:
    identity: str
    label: str
    keys: dict[str, Any]
    properties: dict[str, Any]
    provenance: dict[str, Any]
    version: int
    stub: bool
    remapped_from: str | None


@dataclass(frozen=True)
class Attached:
    """A relationship as seen from one of its nodes."""

    identity: str
    type: str
    from_identity: str
    to_identity: str


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


class StateProjection:
    name = "state"

    # -- InlineProjector -----------------------------------------------------------

    def install(self, conn: sqlite3.Connection) -> None:
        run_script(conn, _TABLES)

    def apply_event(self, conn: sqlite3.Connection, event: EventCore) -> None:
        apply_to_state(conn, event)

    def set_checkpoint(self, conn: sqlite3.Connection, seq: int) -> None:
        conn.execute(
            "INSERT INTO projection_checkpoints (name, seq) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq",
            (self.name, seq),
        )

    # -- reading -------------------------------------------------------------------

    def checkpoint(self, conn: sqlite3.Connection) -> int:
        row = conn.execute(
            "SELECT seq FROM projection_checkpoints WHERE name = ?", (self.name,)
        ).fetchone()
        return int(row[0]) if row else 0

    def node(self, conn: sqlite3.Connection, identity: str) -> NodeState | None:
        row = conn.execute(
            "SELECT identity, label, keys, properties, provenance, version, stub, remapped_from "
            "FROM state_nodes WHERE identity = ?",
            (identity,),
        ).fetchone()
        if row is None:
            return None
        loads = orjson.loads
        return NodeState(
            row[0],
            row[1],
            loads(row[2]),
            loads(row[3]),
            loads(row[4]),
            row[5],
            bool(row[6]),
            row[7],
        )

    def node_exists(self, conn: sqlite3.Connection, identity: str) -> bool:
        found = conn.execute("SELECT 1 FROM state_nodes WHERE identity = ?", (identity,))
        return found.fetchone() is not None

    def relationship_exists(self, conn: sqlite3.Connection, identity: str) -> bool:
        found = conn.execute("SELECT 1 FROM state_relationships WHERE identity = ?", (identity,))
        return found.fetchone() is not None

    def relationships_of(self, conn: sqlite3.Connection, identity: str) -> list[Attached]:
        """Every relationship touching the node, by identity."""
        rows = conn.execute(
            "SELECT identity, type, from_identity, to_identity FROM state_relationships "
            "WHERE from_identity = ?1 UNION "
            "SELECT identity, type, from_identity, to_identity FROM state_relationships "
            "WHERE to_identity = ?1 ORDER BY 1",
            (identity,),
        ).fetchall()
        return [Attached(*row) for row in rows]

    def snapshot(self, conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
        """Every row, ordered: two equal snapshots mean two equal states."""
        return {
            "nodes": conn.execute(
                f"SELECT {_NODE_COLUMNS} FROM state_nodes ORDER BY identity"
            ).fetchall(),
            "relationships": conn.execute(
                f"SELECT {_REL_COLUMNS} FROM state_relationships ORDER BY identity"
            ).fetchall(),
        }

    def reset(self, conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM state_nodes")
        conn.execute("DELETE FROM state_relationships")
        conn.execute("DELETE FROM projection_checkpoints WHERE name = ?", (self.name,))

    def rebuilt_snapshot(self, log: EventLog) -> dict[str, list[tuple[Any, ...]]]:
        """Replay the whole log into a fresh in-memory database and snapshot it."""
        scratch = sqlite3.connect(":memory:", isolation_level=None)
        try:
            self.install(scratch)
            scratch.execute("BEGIN")
            for event in log.iter_replayed():
                self.apply_event(scratch, event)
            scratch.execute("COMMIT")
            return self.snapshot(scratch)
        finally:
            scratch.close()


# -- event handlers ------------------------------------------------------------------


def _stamp(event: EventCore) -> tuple[str, int, str, str]:
    return (
        _text(event.provenance),
        event.seq,
        format_timestamp(event.occurred_at),
        event.actor.agent,
    )


def _upsert_node(
    conn: sqlite3.Connection, event: EventCore, ref: NodeRef, changes: dict[str, Any], *, stub: bool
) -> None:
    row = conn.execute(
        "SELECT properties, remapped_from, created_seq FROM state_nodes WHERE identity = ?",
        (ref.identity,),
    ).fetchone()
    current = orjson.loads(row[0]) if row else {}
    properties = merge_properties({**current, **ref.keys}, changes)
    remapped_from = ref.remapped_from or (row[1] if row else None)
    provenance, seq, at, by = _stamp(event)
    conn.execute(
        f"INSERT OR REPLACE INTO state_nodes ({_NODE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            ref.identity,
            ref.label,
            _text(ref.keys),
            _text(properties),
            provenance,
            event.streams[ref.stream],
            int(stub),
            remapped_from,
            row[2] if row else seq,
            seq,
            at,
            by,
        ),
    )


def _relationship_written(
    conn: sqlite3.Connection, event: EventCore, written: RelationshipWritten
) -> None:
    for stub in written.stubs_created:
        exists = conn.execute("SELECT 1 FROM state_nodes WHERE identity = ?", (stub.identity,))
        if exists.fetchone() is None:
            _upsert_node(conn, event, stub, {}, stub=True)
    row = conn.execute(
        "SELECT properties, remapped_from, created_seq FROM state_relationships WHERE identity = ?",
        (written.identity,),
    ).fetchone()
    properties = merge_properties(orjson.loads(row[0]) if row else {}, written.properties)
    provenance, seq, at, by = _stamp(event)
    conn.execute(
        f"INSERT OR REPLACE INTO state_relationships ({_REL_COLUMNS}) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
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


def apply_to_state(conn: sqlite3.Connection, event: EventCore) -> None:
    """One event's effect on the state tables (events that change no graph: none)."""
    match payload_of(event):
        case NodeWritten() as written:
            _upsert_node(conn, event, written.node, written.properties, stub=False)
        case RelationshipWritten() as written:
            _relationship_written(conn, event, written)
        case NodeDeleted(node=node):
            conn.execute("DELETE FROM state_nodes WHERE identity = ?", (node.identity,))
        case RelationshipDeleted(identity=identity):
            conn.execute("DELETE FROM state_relationships WHERE identity = ?", (identity,))
        case _:
            pass
