"""A walk's step: the relationships of every node of a frontier, read in one statement.

``graph_query`` expands its seeds hop by hop, reading at most ``cap`` relationships of each
node reached. One statement per node cost a walk of 42 nodes 42 round trips through the
driver and the statement machinery, a third of a query at 100k people
(``bench/bench_query.py``); here each hop is one statement whose per-node subquery keeps
the bound (the ``(from_identity, identity, …)`` and ``(to_identity, identity, …)`` indexes
give each node's first ``cap`` in identity order, without reading the rest of a hub's).

Those indexes hold what a step reads (type and the other end: a relationship's identity
names them, so its index entries never change), so a step never reads the table's rows,
which carry properties and provenance and lie scattered over the file: which write last
set a relationship is asked only of the few a query keeps (``last_writes``).

SQLite has no ``LATERAL``: a correlated ``identity IN (… LIMIT ?)`` per node does the same
there, and PostgreSQL's ``LATERAL`` join is its spelling of it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, NamedTuple

import orjson

from writegate.eventlog.sql import Sql


class Attached(NamedTuple):
    """A relationship as seen from one of its nodes (a tuple: a walk makes hundreds)."""

    identity: str
    type: str
    from_identity: str
    to_identity: str


Step = tuple[dict[str, list[Attached]], bool]
"""Each node's relationships, at most ``cap`` a node in identity order; and whether any
node had more."""

_COLUMNS = "identity, type, from_identity, to_identity"
_SQLITE = (
    "SELECT n.value, {cols} FROM json_each(?) AS n JOIN state_relationships AS e "
    "ON e.{column} = n.value AND e.identity IN (SELECT r.identity FROM state_relationships "
    "r{ends} WHERE r.{column} = n.value{where} ORDER BY r.identity LIMIT ?)"
)
_POSTGRES = (
    "SELECT n.v, {cols} FROM json_array_elements_text(?::json) AS n(v) CROSS JOIN LATERAL "
    "(SELECT {inner} FROM state_relationships r{ends} "
    "WHERE r.{column} = n.v{where} ORDER BY r.identity LIMIT ?) AS e"
)


def links_step(
    conn: Sql,
    identities: Sequence[str],
    relationship_type: str | None,
    cap: int,
    *,
    ends: str = "",
    scoped: str = "",
    scopes: Sequence[str] = (),
) -> Step:
    """The relationships of each of ``identities`` (of one type, if given); ``ends`` and
    ``scoped`` (joins and a condition over ``r``, with ``scopes`` its parameters) keep a
    scoped caller's walk inside its scopes."""
    if not identities:
        return {}, False
    where = (" AND r.type = ?" if relationship_type else "") + scoped
    shape = _SQLITE if isinstance(conn, sqlite3.Connection) else _POSTGRES
    cols = ", ".join(f"e.{c.strip()}" for c in _COLUMNS.split(","))
    inner = ", ".join(f"r.{c.strip()}" for c in _COLUMNS.split(","))
    sql = " UNION ALL ".join(
        shape.format(cols=cols, inner=inner, ends=ends, column=column, where=where)
        for column in ("from_identity", "to_identity")
    )
    one = [
        orjson.dumps(list(identities)).decode(),
        *([relationship_type] if relationship_type else []),
        *scopes,
        cap + 1,
    ]
    found: dict[str, dict[str, Attached]] = {i: {} for i in identities}
    for node, identity, rtype, source, target in conn.execute(sql, one * 2):
        found[node][identity] = Attached(identity, rtype, source, target)
    more = False
    step: dict[str, list[Attached]] = {}
    for node, links in found.items():
        ordered = [links[k] for k in sorted(links)]
        more |= len(ordered) > cap
        step[node] = ordered[:cap]
    return step, more


_AROUND_SQLITE = (
    "SELECT n.key, {d}, e.identity FROM json_each(?) AS n JOIN state_relationships AS e "
    "ON e.{column} = n.value AND e.identity IN (SELECT r.identity FROM state_relationships "
    "r{ends} WHERE r.{column} = n.value{where} ORDER BY r.identity LIMIT ?)"
)
_AROUND_POSTGRES = (
    "SELECT n.k - 1, {d}, e.identity, e.at FROM json_array_elements_text(?::json) "
    "WITH ORDINALITY AS n(v, k) CROSS JOIN LATERAL (SELECT r.identity, row_number() OVER "
    "(ORDER BY r.identity) AS at FROM state_relationships r{ends} WHERE r.{column} = n.v"
    "{where} ORDER BY r.identity LIMIT ?) AS e"
)
_READ_AT_ONCE = 500  # relationships per IN (...) read


def edges_around(
    conn: Sql,
    identities: Sequence[str],
    relationship_type: str | None,
    cap: int,
    columns: str,
    *,
    ends: str = "",
    scoped: str = "",
    scopes: Sequence[str] = (),
    each: int | None = None,
) -> tuple[list[tuple[Any, ...]], bool]:
    """The rows (``columns``, the identity first) of the relationships a node-by-node read
    gives — each node's outgoing then incoming, each in identity order (with ``each``: only
    each node's first ``each`` of those), each once, at most ``cap`` — and whether there
    were more; in two statements whatever the nodes' number.

    The first reads the order from the two walk indexes alone (at most ``cap + 1`` entries
    a node and direction, so a hub costs index entries, not rows); the second reads only
    the rows kept. One statement per node and direction cost a search of 25 nodes 50 round
    trips, a tenth of its time at 1M people."""
    if not identities:
        return [], False
    where = (" AND r.type = ?" if relationship_type else "") + scoped
    sqlite = isinstance(conn, sqlite3.Connection)
    shape = _AROUND_SQLITE if sqlite else _AROUND_POSTGRES
    sql = " UNION ALL ".join(
        shape.format(d=d, ends=ends, column=column, where=where)
        for d, column in enumerate(("from_identity", "to_identity"))
    )
    one = [
        orjson.dumps(list(identities)).decode(),
        *([relationship_type] if relationship_type else []),
        *scopes,
        cap + 1 if each is None else min(each, cap + 1),
    ]
    found = [tuple(row) for row in conn.execute(sql, one * 2)]
    # SQLite compares text by its bytes, as Python does; PostgreSQL numbers each list
    found.sort(key=(lambda r: (r[0], r[1], r[2])) if sqlite else (lambda r: (r[0], r[1], r[3])))
    if each is not None:  # each node's first ``each``: outgoing, then incoming
        taken: dict[Any, int] = {}
        firsts = []
        for row in found:
            if taken.get(row[0], 0) < each:
                taken[row[0]] = taken.get(row[0], 0) + 1
                firsts.append(row)
        found = firsts
    kept = list(dict.fromkeys(row[2] for row in found))
    more = len(kept) > cap
    kept = kept[:cap]
    rows: dict[str, tuple[Any, ...]] = {}
    for start in range(0, len(kept), _READ_AT_ONCE):
        chunk = kept[start : start + _READ_AT_ONCE]
        marks = ",".join("?" * len(chunk))
        read = f"SELECT {columns} FROM state_relationships WHERE identity IN ({marks})"
        rows.update((row[0], tuple(row)) for row in conn.execute(read, chunk))
    return [rows[i] for i in kept if i in rows], more


_COUNTED_SQLITE = (
    "SELECT n.value, count(*) FROM json_each(?) AS n JOIN state_relationships AS r "
    "ON r.{column} = n.value{ends} WHERE 1 = 1{also}{where} GROUP BY n.value"
)
_COUNTED_POSTGRES = (
    "SELECT n.v, count(*) FROM json_array_elements_text(?::json) AS n(v) "
    "JOIN state_relationships AS r ON r.{column} = n.v{ends} WHERE 1 = 1{also}{where} "
    "GROUP BY n.v"
)


def relationships_counted(
    conn: Sql,
    identities: Sequence[str],
    *,
    ends: str = "",
    scoped: str = "",
    scopes: Sequence[str] = (),
) -> dict[str, int]:
    """How many relationships each of ``identities`` has (a loop once), counted from the
    walk indexes: what an answer that shows only some of them says it left out."""
    if not identities:
        return {}
    sqlite = isinstance(conn, sqlite3.Connection)
    shape = _COUNTED_SQLITE if sqlite else _COUNTED_POSTGRES
    counts = dict.fromkeys(identities, 0)
    for column, also in (("from_identity", ""), ("to_identity", " AND r.from_identity <> n.{v}")):
        sql = shape.format(
            column=column,
            ends=ends,
            where=scoped,
            also=also.format(v="value" if sqlite else "v"),
        )
        for identity, count in conn.execute(
            sql, [orjson.dumps(list(identities)).decode(), *scopes]
        ):
            counts[identity] += int(count)
    return counts
