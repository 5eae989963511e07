"""The node rows an append's transaction has read and written, kept while it is open.

On PostgreSQL every read is a round trip, and one node write asks for the same row several
times: the gate's checks (is it there, merged away, in which scope), then the state's own
update (its properties before, its scope) and the text index (what it now says). Inside an
append's pipelined transaction (``eventlog.pgsql.remembered``) the first read keeps the row,
every write here keeps what it wrote, and the rest are answered from that; ``read_ahead``
reads the rows of every node a write (or a whole batch) names in one round trip before its
checks run, with the resolution index's candidates of each new name it may create (kept
until the transaction changes the index: ``index_changed``). Elsewhere — SQLite, or no
append open — each question is asked as before.

Only this package and the text index write the rows kept here: a write that does not say
what it wrote (a merge's aliases, a forgetting, a reset) forgets what is kept (``forget``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from writegate.eventlog.pgsql import remembered
from writegate.eventlog.sql import Sql
from writegate.projections.search import text_index_for
from writegate.projections.state.blocking import Probe, probe_statement
from writegate.projections.state.tables import NODE_COLUMNS

NodeTuple = tuple[Any, ...]  # a state_nodes row as ``NODE_COLUMNS`` reads it
LABEL, KEYS, PROPERTIES, STUB, REMAPPED, CREATED, SCOPE, RESOLUTION_KEYS = 1, 2, 3, 6, 7, 8, 12, 13
_NODES = f"SELECT {NODE_COLUMNS} FROM state_nodes WHERE identity = ?"
# the identities as a JSON array: psycopg adapts a list to an array element by element, in
# Python, and a string as it is
_NAMED = "ANY(ARRAY(SELECT json_array_elements_text(?::json)))"
_NODES_OF = f"SELECT {NODE_COLUMNS} FROM state_nodes WHERE identity = {_NAMED}"
_ALIASES_OF = f"SELECT alias, identity, merge FROM state_aliases WHERE alias = {_NAMED}"


class Seen:
    """What one transaction knows of rows as they now stand (an absent one as None)."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeTuple | None] = {}
        self.aliases: dict[str, tuple[str, str] | None] = {}
        self.node_documents: dict[str, str | None] = {}  # a node's text document's scope
        self.probes: dict[tuple[Probe, int], list[tuple[str, str]]] = {}  # ranges, limit

    def node(self, conn: Sql, identity: str) -> NodeTuple | None:
        if identity not in self.nodes:
            self.nodes[identity] = conn.execute(_NODES, (identity,)).fetchone()
        return self.nodes[identity]


def seen(conn: Sql) -> Seen | None:
    """The transaction's ``Seen`` where one is kept (an append's on PostgreSQL)."""
    return remembered(conn, Seen)


def node_row(conn: Sql, identity: str) -> NodeTuple | None:
    """The node's whole row (None: absent), asked once a transaction where rows are kept."""
    kept = seen(conn)
    if kept is not None:
        return kept.node(conn, identity)
    row: NodeTuple | None = conn.execute(_NODES, (identity,)).fetchone()
    return row


def wrote_node(conn: Sql, identity: str, row: NodeTuple | None) -> None:
    """The node's row is now ``row`` (None: deleted)."""
    if (kept := seen(conn)) is not None:
        kept.nodes[identity] = row


def forget(conn: Sql) -> None:
    """Rows were changed without saying how: ask again."""
    if (kept := seen(conn)) is not None:
        kept.nodes.clear()
        kept.aliases.clear()
        kept.node_documents.clear()
        kept.probes.clear()


def index_changed(conn: Sql) -> None:
    """The resolution index changed: candidates read before it are asked again."""
    if (kept := seen(conn)) is not None:
        kept.probes.clear()


def probed(conn: Sql, ranges: Probe, limit: int) -> list[tuple[str, str]] | None:
    """The index rows of ``ranges`` as read ahead in this transaction (None: not read)."""
    kept = seen(conn)
    return kept.probes.get((ranges, limit)) if kept is not None else None


def read_ahead(
    conn: Sql,
    identities: Sequence[str],
    probes: Sequence[Callable[[], tuple[Probe, int] | None]] = (),
) -> None:
    """Read the rows, aliases and text documents' scopes of the nodes ``identities`` name
    that are not known yet, and the index rows of each of ``probes`` (made only here: a
    write's ranges, or None), all in one round trip (nothing where rows are not kept)."""
    kept = seen(conn)
    if kept is None:
        return
    wanted = [i for i in dict.fromkeys(identities) if i not in kept.nodes]
    asked = [p for p in dict.fromkeys(probe() for probe in probes) if p is not None]
    asked = [p for p in asked if p not in kept.probes and p[0]]
    if not wanted and not asked:
        return
    named = orjson.dumps(wanted).decode()
    nodes = conn.execute(_NODES_OF, (named,)) if wanted else None
    aliases = conn.execute(_ALIASES_OF, (named,)) if wanted else None
    documents = text_index_for(conn).scopes_later(conn, wanted) if wanted else None
    rows = [conn.execute(*probe_statement(*probe)) for probe in asked]
    found = {str(row[0]): row for row in nodes.fetchall()} if nodes else {}
    merged = (
        {str(row[0]): (str(row[1]), str(row[2])) for row in aliases.fetchall()} if aliases else {}
    )
    scopes = documents() if documents else {}
    for probe, read in zip(asked, rows, strict=True):
        kept.probes[probe] = [(str(row[0]), str(row[1])) for row in read.fetchall()]
    for identity in wanted:
        kept.nodes[identity] = found.get(identity)
        kept.aliases.setdefault(identity, merged.get(identity))
        kept.node_documents.setdefault(identity, scopes.get(identity))


__all__ = [
    "Seen",
    "forget",
    "index_changed",
    "node_row",
    "probed",
    "read_ahead",
    "seen",
    "wrote_node",
]
