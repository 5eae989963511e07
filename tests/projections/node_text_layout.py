"""A SQLite log's read model made as layout 20 left it: node documents in the text index's
own table, the node table keyed by identity, without its text (``nodetext`` upgrades it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from writegate.eventlog.sql import run_script
from writegate.projections.search import SqliteTextIndex
from writegate.projections.state.tables import LAYOUT_MARK, NODE_COLUMNS, NODES


def layout_20(path: Path) -> None:
    """Turn the read model of the (closed) log at ``path`` back into layout 20's."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    documents = conn.execute(
        "SELECT identity, text, scope FROM state_nodes ORDER BY document"
    ).fetchall()
    conn.execute("DROP VIEW state_node_documents")
    conn.execute("ALTER TABLE state_nodes RENAME TO state_nodes_rows")
    run_script(conn, NODES)
    conn.execute(
        f"INSERT INTO state_nodes ({NODE_COLUMNS}) SELECT {NODE_COLUMNS} FROM state_nodes_rows"
    )
    conn.execute("DROP TABLE state_nodes_rows")  # its triggers with it
    SqliteTextIndex().install(conn)  # no rows handed: nodes' documents in its own table
    conn.executemany(
        "INSERT INTO search_documents (identity, kind, text, scope_from, scope_to) "
        "VALUES (?, 'node', ?, ?, ?)",
        [(identity, text, scope, scope) for identity, text, scope in documents],
    )
    conn.execute("UPDATE projection_checkpoints SET seq = 20 WHERE name = ?", (LAYOUT_MARK,))
    conn.execute("COMMIT")
    conn.close()
