"""A forgotten subject's rows taken out of the read model and its text index.

Run inside the forgetting's write transaction (``Log.forget``'s ``also``), on a connection
that overwrites what it deletes (SQLite's ``secure_delete``). The node goes with its facts,
support, blocking keys, aliases, feedback, citations and the relationships touching it; the
log keeps its structure, so a rebuild brings the node back with its sealed values ``null``.
"""

from __future__ import annotations

from collections.abc import Sequence

from writegate.eventlog.sql import Sql
from writegate.projections.search import text_index_for

# (table, column naming a node): every row of the read model that belongs to one node
_BY_NODE = (
    ("state_facts", "identity"),
    ("state_support", "identity"),
    ("state_resolution_keys", "identity"),
    ("state_aliases", "identity"),
    ("state_aliases", "alias"),
    ("state_feedback", "identity"),
    ("state_citations", "identity"),
)


def forget_nodes(conn: Sql, identities: Sequence[str]) -> dict[str, int]:
    """Delete the nodes ``identities`` name and every row of theirs; the counts per table."""
    counts: dict[str, int] = {}
    relationships: list[str] = []
    for identity in identities:
        rows = conn.execute(
            "SELECT identity FROM state_relationships WHERE from_identity = ? OR to_identity = ?",
            (identity, identity),
        ).fetchall()
        relationships += [str(r[0]) for r in rows]
    gone = [*identities, *relationships]

    def delete(table: str, column: str, names: Sequence[str]) -> None:
        for name in names:
            found = conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (name,)).rowcount
            counts[table] = counts.get(table, 0) + max(found, 0)

    for table, column in _BY_NODE:
        delete(table, column, gone if column == "identity" else identities)
    delete("state_relationships", "identity", relationships)
    delete("state_nodes", "identity", identities)
    index = text_index_for(conn)
    before = len(index.documents_of(conn, gone))
    index.drop(conn, gone)
    index.compact(conn)
    counts["search_documents"] = before
    return {table: count for table, count in counts.items() if count}


__all__ = ["forget_nodes"]
