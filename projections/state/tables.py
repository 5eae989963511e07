"""The state read model's tables. ``projections.state`` owns them: every statement on them
is in this package, and nothing outside it names them."""

from __future__ import annotations

TABLES = """
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
NODE_COLUMNS = (
    "identity, label, keys, properties, provenance, version, stub, remapped_from, "
    "created_seq, updated_seq, updated_at, updated_by"
)
REL_COLUMNS = (
    "identity, type, from_identity, to_identity, properties, provenance, version, "
    "remapped_from, created_seq, updated_seq, updated_at, updated_by"
)


def _upsert(table: str, columns: str) -> str:
    """Insert a row or replace the one with its identity (the same SQL on both databases)."""
    names = [c.strip() for c in columns.split(",")]
    updates = ", ".join(f"{c} = excluded.{c}" for c in names[1:])
    marks = ",".join("?" * len(names))
    return (
        f"INSERT INTO {table} ({columns}) VALUES ({marks}) "
        f"ON CONFLICT (identity) DO UPDATE SET {updates}"
    )


UPSERT_NODE = _upsert("state_nodes", NODE_COLUMNS)
UPSERT_RELATIONSHIP = _upsert("state_relationships", REL_COLUMNS)
