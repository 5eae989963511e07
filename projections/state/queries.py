"""Asking the state read model: typed rows, lookups, neighbourhoods, search and counts.

Everything that reads the state tables — the gate's stateful checks, the agents' reads,
audit and reports — asks through ``StateReader``, so the tables have one owner and a
second backend has one place to answer. Every method takes the connection to read on,
so a caller can hold one snapshot (``EventLog.snapshot()``) across several questions.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import orjson

from writegate.eventlog.sql import Sql
from writegate.language import FactRecord, WriteProvenance
from writegate.projections.state import blocking, remembered, tallies
from writegate.projections.state.tables import (
    COUNTS_LAYOUT,
    STATE_TABLES,
    layout_of,
    ordered_selects,
)
from writegate.projections.state.walk import (
    Attached,
    Step,
    edges_around,
    links_step,
    relationships_counted,
)

_NODE_READ = (
    "identity, label, keys, properties, provenance, version, stub, remapped_from, "
    "updated_seq, updated_at, updated_by"
)
_EDGE_READ = (
    "identity, type, from_identity, to_identity, properties, provenance, version, "
    "remapped_from, updated_seq, updated_at, updated_by"
)
_CHUNK = 500  # identities per IN (...) lookup


class NodeRow(NamedTuple):
    """A node as the state holds it: a tuple, since a search's answer makes some 130 and a
    frozen dataclass's ``__init__`` (an ``object.__setattr__`` a field) took four times as
    long."""

    identity: str
    label: str
    keys: dict[str, Any]
    properties: dict[str, Any]
    provenance: WriteProvenance | None  # the last write's
    version: int
    stub: bool
    remapped_from: str | None
    updated_seq: int
    updated_at: str
    updated_by: str


class EdgeRow(NamedTuple):
    """A relationship as the state holds it (a tuple, as ``NodeRow``)."""

    identity: str
    type: str
    from_identity: str
    to_identity: str
    properties: dict[str, Any]
    provenance: WriteProvenance | None
    version: int
    remapped_from: str | None
    updated_seq: int
    updated_at: str
    updated_by: str


@dataclass(frozen=True)
class EndedEdge:
    """A relationship with its endpoints' labels (None: the endpoint is gone)."""

    edge: EdgeRow
    from_label: str | None
    to_label: str | None


@dataclass(frozen=True)
class Fact:
    """Who set one property's value now held: seq, agent and the write's provenance."""

    property: str
    seq: int
    agent: str
    provenance: WriteProvenance | None


@dataclass(frozen=True)
class StateCounts:
    labels: dict[str, int]
    relationship_types: dict[str, int]
    stubs: int


@lru_cache(maxsize=4096)  # most rows share a few writers' provenance: read each text once
def _provenance(text: str) -> WriteProvenance | None:
    data = orjson.loads(text)
    return WriteProvenance.read(data) if data else None


def _node(row: tuple[Any, ...]) -> NodeRow:
    loads = orjson.loads
    return NodeRow(
        row[0],
        row[1],
        loads(row[2]),
        loads(row[3]),
        _provenance(row[4]),
        row[5],
        bool(row[6]),
        row[7],
        row[8],
        row[9],
        row[10],
    )


def _edge(row: tuple[Any, ...]) -> EdgeRow:
    return EdgeRow(
        row[0],
        row[1],
        row[2],
        row[3],
        orjson.loads(row[4]),
        _provenance(row[5]),
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
    )


def _like(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class StateReader:
    """The read half of the state model (``StateProjection`` is one)."""

    name: str

    def checkpoint(self, conn: Sql) -> int:
        row = conn.execute(
            "SELECT seq FROM projection_checkpoints WHERE name = ?", (self.name,)
        ).fetchone()
        return int(row[0]) if row else 0

    def node(self, conn: Sql, identity: str) -> NodeRow | None:
        if (kept := remembered.seen(conn)) is not None:  # the whole row, without created_seq
            whole = kept.node(conn, identity)
            return _node((*whole[:8], *whole[9:12])) if whole is not None else None
        row = conn.execute(f"SELECT {_NODE_READ} FROM state_nodes WHERE identity = ?", (identity,))
        return _node(found) if (found := row.fetchone()) is not None else None

    def relationship(self, conn: Sql, identity: str) -> EdgeRow | None:
        row = conn.execute(
            f"SELECT {_EDGE_READ} FROM state_relationships WHERE identity = ?", (identity,)
        ).fetchone()
        return _edge(row) if row is not None else None

    def node_exists(self, conn: Sql, identity: str) -> bool:
        found = conn.execute("SELECT 1 FROM state_nodes WHERE identity = ?", (identity,))
        return found.fetchone() is not None

    def relationship_exists(self, conn: Sql, identity: str) -> bool:
        found = conn.execute("SELECT 1 FROM state_relationships WHERE identity = ?", (identity,))
        return found.fetchone() is not None

    def relationships_of(self, conn: Sql, identity: str) -> list[Attached]:
        """Every relationship touching the node, by identity."""
        rows = conn.execute(
            "SELECT identity, type, from_identity, to_identity FROM state_relationships "
            "WHERE from_identity = ? UNION "
            "SELECT identity, type, from_identity, to_identity FROM state_relationships "
            "WHERE to_identity = ? ORDER BY 1",
            (identity, identity),
        ).fetchall()
        return [Attached(*row) for row in rows]

    def facts(self, conn: Sql, identity: str, names: Iterable[str]) -> dict[str, Fact]:
        """Who set each of the node's (or relationship's) ``names`` now held."""
        wanted = list(names)
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = conn.execute(
            "SELECT property, seq, agent, provenance FROM state_facts "
            f"WHERE identity = ? AND property IN ({marks})",
            (identity, *wanted),
        )
        return {row[0]: Fact(row[0], row[1], row[2], _provenance(row[3])) for row in rows}

    def fact_records(self, conn: Sql, identity: str) -> list[FactRecord]:
        """Who set each value of one node or relationship, as stored (a merge keeps them)."""
        rows = conn.execute(
            "SELECT property, seq, agent, provenance FROM state_facts WHERE identity = ? "
            "ORDER BY property",
            (identity,),
        )
        return [
            FactRecord(identity=identity, property=p, seq=s, agent=a, provenance=orjson.loads(t))
            for p, s, a, t in rows
        ]

    def resolution_keys_of(self, conn: Sql, identity: str) -> list[str]:
        row = conn.execute(
            "SELECT resolution_keys FROM state_nodes WHERE identity = ?", (identity,)
        ).fetchone()
        return sorted(blocking.stored_keys(row[0]) or []) if row is not None else []

    def alias_of(self, conn: Sql, identity: str) -> tuple[str, str] | None:
        """(the node, the merge) a merged duplicate's identity resolves to, or None."""
        kept = remembered.seen(conn)
        if kept is not None and identity in kept.aliases:
            return kept.aliases[identity]
        row = conn.execute("SELECT identity, merge FROM state_aliases WHERE alias = ?", (identity,))
        alias = (found[0], found[1]) if (found := row.fetchone()) else None
        if kept is not None:
            kept.aliases[identity] = alias
        return alias

    def aliases_to(self, conn: Sql, identity: str) -> list[str]:
        return sorted(self.merges_into(conn, identity))

    def merges_into(self, conn: Sql, identity: str) -> dict[str, str]:
        """The identities that resolve to ``identity``, each with the merge that made it so."""
        rows = conn.execute(
            "SELECT alias, merge FROM state_aliases WHERE identity = ?", (identity,)
        )
        return {str(row[0]): str(row[1]) for row in rows}

    def resolution_candidates(
        self, conn: Sql, ranges: Sequence[tuple[str, str, bool]], limit: int
    ) -> list[tuple[str, str]]:
        """(key, identity) of the index rows in each range (``start <= key < stop``, read
        descending where the flag says), at most ``limit`` names a range (namesakes take
        one place: ``blocking.past_namesakes``), each range a bounded walk of the index."""
        if not ranges:
            return []
        rows = remembered.probed(conn, tuple(ranges), limit)  # read ahead (PostgreSQL)
        if rows is None:
            sql, params = blocking.probe_statement(ranges, limit)
            rows = [(row[0], row[1]) for row in conn.execute(sql, params)]
        return blocking.past_namesakes(conn, ranges, rows, limit)

    def edges_from(self, conn: Sql, identity: str, type: str) -> list[EdgeRow]:
        """The relationships of one type starting at a node (what a functional type allows
        one of): an index probe, never a search."""
        rows = conn.execute(
            f"SELECT {_EDGE_READ} FROM state_relationships "
            "WHERE from_identity = ? AND type = ? ORDER BY identity",
            (identity, type),
        )
        return [_edge(row) for row in rows]

    def proposals(self, conn: Sql, *, pending: bool, limit: int) -> list[tuple[str, int]]:
        """(proposal, seq) of the review lane, oldest first: the pending ones, or all."""
        where = "WHERE status = 'pending' " if pending else ""
        rows = conn.execute(
            f"SELECT proposal, seq FROM state_proposals {where}ORDER BY seq LIMIT ?", (limit,)
        )
        return [(row[0], row[1]) for row in rows]

    def proposal(self, conn: Sql, proposal: str) -> tuple[int, str] | None:
        """(seq, status) of one proposal."""
        row = conn.execute(
            "SELECT seq, status FROM state_proposals WHERE proposal = ?", (proposal,)
        ).fetchone()
        return (row[0], row[1]) if row else None

    def approved_writes(self, conn: Sql, agent: str) -> int:
        """How many of ``agent``'s held writes a reviewer approved (an index probe)."""
        row = conn.execute(
            "SELECT approved FROM state_approved_agents WHERE agent = ?", (agent,)
        ).fetchone()
        return int(row[0]) if row else 0

    def pending_proposals(self, conn: Sql) -> int:
        row = conn.execute("SELECT count(*) FROM state_proposals WHERE status = 'pending'")
        return int(row.fetchone()[0])

    def nodes(self, conn: Sql, identities: Iterable[str]) -> list[NodeRow]:
        """The nodes that exist among ``identities``, in their order, each once."""
        wanted = list(dict.fromkeys(identities))
        found: dict[str, NodeRow] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(
                f"SELECT {_NODE_READ} FROM state_nodes WHERE identity IN ({marks})", chunk
            ):
                found[row[0]] = _node(row)
        return [found[i] for i in wanted if i in found]

    def edges_touching(
        self,
        conn: Sql,
        identities: Iterable[str],
        relationship_type: str | None,
        cap: int,
        each: int | None = None,
    ) -> tuple[list[EdgeRow], bool]:
        """Relationships starting or ending at any of ``identities`` (of one type, if given),
        at most ``cap`` (and ``each`` a node); the flag says whether there were more."""
        found, more = edges_around(
            conn, list(identities), relationship_type, cap, _EDGE_READ, each=each
        )
        return [_edge(row) for row in found], more

    def relationships_counted(self, conn: Sql, identities: Sequence[str]) -> dict[str, int]:
        """How many relationships each of ``identities`` has."""
        return relationships_counted(conn, identities)

    def links_touching(
        self, conn: Sql, identities: Sequence[str], relationship_type: str | None, cap: int
    ) -> Step:
        """Each node's relationships (of one type, if given), at most ``cap`` a node: a
        walk's step, one statement, read from indexes alone."""
        return links_step(conn, identities, relationship_type, cap)

    def last_writes(self, conn: Sql, identities: Iterable[str]) -> dict[str, int]:
        """The seq that last wrote each of the relationships among ``identities`` that
        exist: what a walk's step leaves unread, asked of the few a query keeps."""
        wanted = list(dict.fromkeys(identities))
        found: dict[str, int] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(
                conn.execute(
                    "SELECT identity, updated_seq FROM state_relationships "
                    f"WHERE identity IN ({marks})",
                    chunk,
                )
            )
        return found

    def search(self, conn: Sql, text: str, after: str, limit: int) -> list[str]:
        """Identities of nodes whose label, keys or properties contain ``text`` (any case),
        after the identity ``after``, in identity order."""
        rows = conn.execute(
            "SELECT identity FROM state_nodes WHERE identity > :after AND ("
            "lower(label) LIKE :like ESCAPE '\\' OR lower(keys) LIKE :like ESCAPE '\\' "
            "OR lower(properties) LIKE :like ESCAPE '\\') ORDER BY identity LIMIT :limit",
            {"after": after, "like": _like(text), "limit": limit},
        ).fetchall()
        return [row[0] for row in rows]

    def counts(self, conn: Sql) -> StateCounts:
        """Kept as the graph changes (``tallies``): a few rows read, whatever the size."""
        if layout_of(conn) < COUNTS_LAYOUT:
            return StateCounts(*tallies.scanned(conn))
        return StateCounts(*tallies.kept(conn))

    def nodes_labelled(
        self, conn: Sql, label: str, after: str = "", limit: int | None = None
    ) -> Iterator[NodeRow]:
        """Every node of one label, in identity order (what a schema change would meet);
        a page of them: ``limit`` after the identity ``after``, for a reader that writes
        as it goes."""
        query = f"SELECT {_NODE_READ} FROM state_nodes WHERE label = ? AND identity > ? "
        query += "ORDER BY identity" + (f" LIMIT {int(limit)}" if limit is not None else "")
        for row in conn.execute(query, (label, after)):
            yield _node(row)

    def edges_typed(self, conn: Sql, type: str) -> Iterator[EndedEdge]:
        """Every relationship of one type with its endpoints' labels, in identity order."""
        columns = ", ".join(f"r.{c.strip()}" for c in _EDGE_READ.split(","))
        query = (
            f"SELECT {columns}, f.label, t.label FROM state_relationships r "
            "LEFT JOIN state_nodes f ON f.identity = r.from_identity "
            "LEFT JOIN state_nodes t ON t.identity = r.to_identity "
            "WHERE r.type = ? ORDER BY r.identity"
        )
        for row in conn.execute(query, (type,)):
            yield EndedEdge(_edge(row[:-2]), row[-2], row[-1])

    def snapshot(self, conn: Sql) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, ordered: two equal snapshots mean two equal states
        (who set each value, aliases, blocking keys and the review lane included)."""
        return {
            _SNAPSHOT_NAMES.get(table, table): conn.execute(sql).fetchall()
            for table, sql in zip(STATE_TABLES, ordered_selects(STATE_TABLES), strict=True)
        }


_SNAPSHOT_NAMES = {"state_nodes": "nodes", "state_relationships": "relationships"}
