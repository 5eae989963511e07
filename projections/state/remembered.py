"""The node rows an append's transaction has read and written, kept while it is open.

One node write asks for the same row several times: the gate's checks (is it there, merged
away, in which scope), then the state's own update (its properties before, its scope) and
the text index (what it now says). Inside an append's transaction (``sql.remembered``) the
first read keeps the row, every write here keeps what it wrote, and the rest are answered
from that. On PostgreSQL, where every read is a round trip, ``read_ahead`` also reads the
rows of every node a write (or a whole batch) names in one round trip before its checks
run, with the resolution index's candidates of each new name it may create (kept until the
transaction changes the index: ``index_changed``), and, where the append reads them, the
versions of those nodes' streams, in the statement that reads their rows. Outside an
append each question is asked as it comes.

Only this package and the text index write the rows kept here: a write that does not say
what it wrote (a merge's aliases, a forgetting, a reset) forgets what is kept (``forget``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from typing import Any

import orjson

from writegate.eventlog.sql import Sql, remembered
from writegate.eventlog.tables import stream_version_of
from writegate.projections.search import text_index_for
from writegate.projections.state.blocking import Probe, probe_statement
from writegate.projections.state.tables import NODE_COLUMNS

NodeTuple = tuple[Any, ...]  # a state_nodes row as ``NODE_COLUMNS`` reads it
LABEL, KEYS, PROPERTIES, STUB, REMAPPED, CREATED, SCOPE = 1, 2, 3, 6, 7, 8, 12
RESOLUTION_KEYS, UNSEARCHABLE = 13, 14
_NODES = f"SELECT {NODE_COLUMNS} FROM state_nodes WHERE identity = ?"
# The identities as a JSON array (psycopg adapts a list to an array element by element, in
# Python, and a string as it is), each looked up by its key: a row a name, its node's row
# (NULLs: none), what it is an alias of (NULLs: nothing) and its text document's scope. Not
# ``= ANY(...)``: an array the planner cannot count may be planned, on a table still small,
# as a scan of it, and the server keeps that plan for the prepared statement while the table
# grows, until the table is next analysed (0.3 ms a write at 2,000 nodes, measured).
_AHEAD = (
    "SELECT named.v, {document}, node.*, alias.identity, alias.merge{versions} FROM "
    "json_array_elements_text(?::json) AS named(v) LEFT JOIN LATERAL "
    f"(SELECT {NODE_COLUMNS} FROM state_nodes WHERE identity = named.v OFFSET 0) AS node "
    "ON true LEFT JOIN LATERAL "
    "(SELECT identity, merge FROM state_aliases WHERE alias = named.v OFFSET 0) AS alias "
    "ON true"
)
_WIDTH = 2 + len(NODE_COLUMNS.split(","))
# the first standing retraction of each (kind, name) pair named, as a JSON array of pairs
_TAKEN = (
    "SELECT r.kind, r.name, MIN(r.retraction) FROM json_array_elements(?::json) AS w(v) "
    "JOIN state_retracted AS r ON r.kind = w.v->>0 AND r.name = w.v->>1 GROUP BY r.kind, r.name"
)
# each node's stream's version, where the append reads them (``Transaction.unread_versions``)
_VERSIONS = ", " + stream_version_of("? || named.v")


class Seen:
    """What one transaction knows of rows as they now stand (an absent one as None)."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeTuple | None] = {}
        self.aliases: dict[str, tuple[str, str] | None] = {}
        self.node_documents: dict[str, str | None] = {}  # a node's text document's scope
        self.probes: dict[tuple[Probe, int], list[tuple[str, str]]] = {}  # ranges, limit
        self.retracted: dict[tuple[str, str], str | None] = {}  # (kind, name): retraction

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
        kept.retracted.clear()


def index_changed(conn: Sql) -> None:
    """The resolution index changed: candidates read before it are asked again."""
    if (kept := seen(conn)) is not None:
        kept.probes.clear()


def probed(conn: Sql, ranges: Probe, limit: int) -> list[tuple[str, str]] | None:
    """The index rows of ``ranges`` as read ahead in this transaction (None: not read)."""
    kept = seen(conn)
    return kept.probes.get((ranges, limit)) if kept is not None else None


def taken_back(conn: Sql, kind: str, names: Sequence[str]) -> dict[str, str | None] | None:
    """The standing retraction of each of ``names`` as read ahead (None: one was not)."""
    kept = seen(conn)
    if kept is None or any((kind, name) not in kept.retracted for name in names):
        return None
    return {name: kept.retracted[(kind, name)] for name in names}


def read_ahead(
    conn: Sql,
    identities: Sequence[str],
    probes: Sequence[Callable[[], tuple[Probe, int] | None]] = (),
    versions: tuple[str, Collection[str]] | None = None,
    retractions: Sequence[tuple[str, str]] = (),
) -> dict[str, int] | None:
    """Read the rows, aliases and text documents' scopes of the nodes ``identities`` name
    that are not known yet, the index rows of each of ``probes`` (made only here: a write's
    ranges, or None) and the standing retractions of the sources and observations
    ``retractions`` names (``(kind, name)``: a write's checks ask each), all in one round
    trip (nothing where rows are not kept; an append's read model is in the current layout,
    so the table is there).
    ``versions``: the prefix of a node's stream and the streams whose versions are wanted;
    those of the nodes read here are read with their rows, in the same statement, and
    returned (a stream none has written: 0). None where rows are not kept."""
    kept = seen(conn)
    if kept is None or isinstance(conn, sqlite3.Connection):  # in process: no round trips
        return None
    wanted = [i for i in dict.fromkeys(identities) if i not in kept.nodes]
    asked = [p for p in dict.fromkeys(probe() for probe in probes) if p is not None]
    asked = [p for p in asked if p not in kept.probes and p[0]]
    taken = [r for r in dict.fromkeys(retractions) if r not in kept.retracted]
    if not wanted and not asked and not taken:
        return {}
    nodes = None  # every statement sent, then each read: one round trip on PostgreSQL
    prefix, streams = versions if versions is not None else ("", ())
    versioned = bool(streams) and any(prefix + i in streams for i in wanted)
    if wanted:
        ahead = _AHEAD.format(
            document=text_index_for(conn).scope_of("named.v"),
            versions=_VERSIONS if versioned else "",
        )
        named = orjson.dumps(wanted).decode()
        nodes = conn.execute(ahead, (prefix, named) if versioned else (named,))
    reads = [conn.execute(*probe_statement(*probe)) for probe in asked]
    standing = conn.execute(_TAKEN, (orjson.dumps(taken).decode(),)) if taken else None
    found = {str(row[0]): row for row in nodes.fetchall()} if nodes is not None else {}
    for probe, read in zip(asked, reads, strict=True):
        kept.probes[probe] = [(str(row[0]), str(row[1])) for row in read.fetchall()]
    kept.retracted.update(dict.fromkeys(taken))
    for kind, name, retraction in standing.fetchall() if standing is not None else ():
        kept.retracted[(str(kind), str(name))] = str(retraction)
    read_versions: dict[str, int] = {}
    for identity in wanted:
        row = found[identity]
        node, alias = row[2:_WIDTH], row[_WIDTH : _WIDTH + 2]
        kept.nodes[identity] = None if node[0] is None else node
        merged = None if alias[0] is None else (str(alias[0]), str(alias[1]))
        kept.aliases.setdefault(identity, merged)
        kept.node_documents.setdefault(identity, None if row[1] is None else str(row[1]))
        if versioned and prefix + identity in streams:
            read_versions[prefix + identity] = int(row[_WIDTH + 2] or 0)
    return read_versions


__all__ = [
    "Seen",
    "forget",
    "index_changed",
    "node_row",
    "probed",
    "read_ahead",
    "seen",
    "taken_back",
    "wrote_node",
]
