"""Each node's text in its own row, where the text index follows rows (SQLite's FTS5).

A node's document is then the row its write wrote: the text goes in the same statement,
FTS5 follows the row by its triggers, and no documents' row, unique index or second
statement is paid (the index's cost to a single ``write_node`` went from +21% to +12 to +15%,
``bench/bench_search.py``). The row needs an integer key for FTS5 (``document``), so the
table is a rowid table with its identity unique. Elsewhere (PostgreSQL, where a document's
row costs a write 2 to 5%) the index keeps node documents itself, and the table is as before.

A read model of the layout before is made again in place by a writer's open: the rows are
copied into the new table with their text, and the index then builds its node table from
them (no replay).
"""

from __future__ import annotations

import orjson

from writegate.eventlog.sql import Sql, has_column, run_script
from writegate.projections.search import TextIndex
from writegate.projections.state.searchable import text_of
from writegate.projections.state.tables import (
    NODE_COLUMNS,
    NODE_DOCUMENTS,
    NODES,
    NODES_WITH_TEXT,
)

_PAGE = 2000  # rows copied a statement when the table is made again


def create(conn: Sql, index: TextIndex) -> None:
    """The node table as the database keeps it (nothing when it is there)."""
    run_script(
        conn, NODES_WITH_TEXT.replace("{table}", "state_nodes") if index.follows_rows else NODES
    )


def upgrade(conn: Sql, index: TextIndex, *, rebuilt: bool) -> None:
    """A node table of the layout before, where rows should hold text, made again with each
    row's text (its columns were added first: ``StateProjection.install``), or empty if the
    read model is ``rebuilt`` anyway; then the view the index reads them by."""
    if not index.follows_rows:
        return
    if not has_column(conn, "state_nodes", "document"):
        if rebuilt:
            conn.execute("DROP TABLE state_nodes")
            create(conn, index)
        else:
            _made_again(conn)
    run_script(conn, NODE_DOCUMENTS)


def _made_again(conn: Sql) -> None:
    """The node table of the layout before copied into a rowid table with each row's text."""
    run_script(conn, NODES_WITH_TEXT.replace("{table}", "state_nodes_rows"))
    columns = [c.strip() for c in NODE_COLUMNS.split(",")]
    at = {name: i for i, name in enumerate(columns)}
    values = ", ".join("?" * (len(columns) + 1))
    insert = f"INSERT INTO state_nodes_rows ({NODE_COLUMNS}, text) VALUES ({values})"
    # in the order they were made, as a replay numbers them: a search's "most recent"
    # documents are the highest numbers (only the identities are sorted, not the rows)
    made = conn.execute("SELECT identity FROM state_nodes ORDER BY created_seq, identity")
    while identities := [str(row[0]) for row in made.fetchmany(_PAGE)]:
        marks = ", ".join("?" * len(identities))
        sql = f"SELECT {NODE_COLUMNS} FROM state_nodes WHERE identity IN ({marks})"
        rows = {row[0]: row for row in conn.execute(sql, identities).fetchall()}
        page = [rows[identity] for identity in identities]
        texts = [
            text_of(row[at["label"]], orjson.loads(row[at["properties"]]), row[at["unsearchable"]])
            for row in page
        ]
        conn.executemany(insert, [(*row, text) for row, text in zip(page, texts, strict=True)])
    conn.execute("DROP TABLE state_nodes")
    conn.execute("ALTER TABLE state_nodes_rows RENAME TO state_nodes")
