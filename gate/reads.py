"""What agents read back: bounded views of the state read model, each carrying provenance.

An agent's context window is small, so every read is capped (``limit`` with a
cursor, or an explicit ``truncated`` flag) and every node and edge says where it
came from (source, method, confidence, agent) so the agent can weigh it. Reads
run in one SQLite read transaction: a result never mixes two states of the log.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Event, EventLog
from writegate.eventlog.events import format_timestamp
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.identifiers import check_identifier
from writegate.gate.models import NodeRef
from writegate.gate.schema import LoadedSchema
from writegate.projections.state import StateProjection
from writegate.projections.vocabulary import (
    NODE_WRITTEN,
    RELATIONSHIP_WRITTEN,
    node_identity,
    node_stream,
    parse_node_identity,
)

MAX_LIMIT = 500
MAX_EDGES = 1000
MAX_DEPTH = 6

_OUT = ConfigDict(extra="forbid", frozen=True)


class Provenance(BaseModel):
    """Who last wrote this, from what, and how much to trust it."""

    model_config = _OUT

    source: str
    extraction_method: str
    confidence: float
    agent: str
    written_at: str
    seq: int


class NodeView(BaseModel):
    model_config = _OUT

    label: str
    merge_keys: dict[str, Any]
    properties: dict[str, Any]
    version: int
    stub: bool
    remapped_from: str | None
    provenance: Provenance


class EdgeView(BaseModel):
    model_config = _OUT

    type: str
    from_node: NodeRef = Field(serialization_alias="from")
    to_node: NodeRef = Field(serialization_alias="to")
    properties: dict[str, Any]
    version: int
    provenance: Provenance


class Subgraph(BaseModel):
    """Nodes and the edges between them; ``next_cursor`` pages matches, ``truncated`` flags caps."""

    model_config = _OUT

    nodes: list[NodeView]
    edges: list[EdgeView]
    next_cursor: str | None = None
    truncated: bool = False


class PathResult(BaseModel):
    model_config = _OUT

    found: bool
    length: int | None  # edges on the path
    nodes: list[NodeView]
    edges: list[EdgeView]


class HistoryEntry(BaseModel):
    model_config = _OUT

    seq: int
    event_id: str
    type: str
    occurred_at: str
    agent: str
    session: str | None
    source: str | None
    extraction_method: str | None
    reliability: float | None
    confidence: float | None
    schema_version: str | None
    remapped_from: str | None
    changes: dict[str, Any]


class NodeHistory(BaseModel):
    model_config = _OUT

    node: NodeRef
    entries: list[HistoryEntry]
    next_cursor: str | None = None


class Stats(BaseModel):
    model_config = _OUT

    events: int
    head_hash: str
    nodes: int
    relationships: int
    stubs: int
    labels: dict[str, int]
    relationship_types: dict[str, int]
    schema_version: str | None


_NODE_SQL = (
    "SELECT identity, label, keys, properties, provenance, version, stub, remapped_from, "
    "updated_seq, updated_at, updated_by FROM state_nodes"
)
_EDGE_SQL = (
    "SELECT identity, type, from_identity, to_identity, properties, provenance, version, "
    "updated_seq, updated_at, updated_by FROM state_relationships"
)


def _provenance(raw: str, seq: int, at: str, by: str) -> Provenance:
    p = orjson.loads(raw)
    return Provenance(
        source=p.get("source", ""),
        extraction_method=p.get("extraction_method", ""),
        confidence=p.get("confidence", 0.0),
        agent=by,
        written_at=at,
        seq=seq,
    )


def _node(row: tuple[Any, ...]) -> NodeView:
    return NodeView(
        label=row[1],
        merge_keys=orjson.loads(row[2]),
        properties=orjson.loads(row[3]),
        version=row[5],
        stub=bool(row[6]),
        remapped_from=row[7],
        provenance=_provenance(row[4], row[8], row[9], row[10]),
    )


def _ref(identity: str) -> NodeRef:
    label, keys = parse_node_identity(identity)
    return NodeRef(label=label, merge_keys=keys)


def _edge(row: tuple[Any, ...]) -> EdgeView:
    return EdgeView(
        type=row[1],
        from_node=_ref(row[2]),
        to_node=_ref(row[3]),
        properties=orjson.loads(row[4]),
        version=row[6],
        provenance=_provenance(row[5], row[7], row[8], row[9]),
    )


def _bounded(value: int, ceiling: int, field: str) -> int:
    if not 1 <= value <= ceiling:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"{field} must be between 1 and {ceiling}",
            {"field": field},
        )
    return value


def _limit(value: int) -> int:
    return _bounded(value, MAX_LIMIT, "limit")


def _type_filter(relationship_type: str | None) -> str | None:
    if relationship_type is None:
        return None
    return check_identifier(relationship_type, "relationship_type")


def _like(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class GraphReader:
    """Read-only queries over the state read model (and, for history, the log) of one log."""

    def __init__(self, log: EventLog, state: StateProjection) -> None:
        self._log = log
        self._state = state

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        conn = self._log.connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    # -- identity -----------------------------------------------------------------

    @staticmethod
    def identity(ref: Mapping[str, Any], schema: LoadedSchema | None) -> str:
        """The identity a reference names; a remapped label (``User``) reads its canonical one."""
        label = ref.get("label")
        keys = ref.get("merge_keys")
        if not isinstance(label, str) or not isinstance(keys, dict) or not keys:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                "a node reference is {label, merge_keys} with at least one key",
                {"field": "node"},
            )
        label = check_identifier(label.removeprefix(":"), "label")
        if schema is not None and schema.registry.get_entry(label) is None:
            label = schema.registry.remap_target(label) or label
        return node_identity(label, keys)

    # -- node lookups -----------------------------------------------------------------

    def _nodes(self, conn: sqlite3.Connection, identities: Iterable[str]) -> list[NodeView]:
        wanted = list(dict.fromkeys(identities))
        found: dict[str, NodeView] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(f"{_NODE_SQL} WHERE identity IN ({marks})", chunk):
                found[row[0]] = _node(row)
        return [found[i] for i in wanted if i in found]

    def _edges_touching(
        self, conn: sqlite3.Connection, identities: list[str], rtype: str | None, cap: int
    ) -> tuple[list[tuple[Any, ...]], bool]:
        rows: dict[str, tuple[Any, ...]] = {}
        type_clause = " AND type = ?" if rtype else ""
        for identity in identities:
            for column in ("from_identity", "to_identity"):
                params: list[Any] = [identity, *([rtype] if rtype else [])]
                query = (
                    f"{_EDGE_SQL} WHERE {column} = ?{type_clause} ORDER BY identity LIMIT {cap + 1}"
                )
                for row in conn.execute(query, params):
                    rows.setdefault(row[0], row)
                    if len(rows) > cap:
                        return list(rows.values())[:cap], True
        return list(rows.values()), False

    def _with_neighbours(
        self, conn: sqlite3.Connection, identities: list[str], cursor: str | None
    ) -> Subgraph:
        """Seed 001 §4.5: the nodes asked for, their immediate neighbours, and the edges between."""
        edges, truncated = self._edges_touching(conn, identities, None, MAX_EDGES)
        neighbour_ids = [
            other for row in edges for other in (row[2], row[3]) if other not in set(identities)
        ]
        return Subgraph(
            nodes=self._nodes(conn, [*identities, *neighbour_ids]),
            edges=[_edge(row) for row in edges],
            next_cursor=cursor,
            truncated=truncated,
        )

    def open_nodes(
        self, refs: list[Mapping[str, Any]], schema: LoadedSchema | None = None
    ) -> Subgraph:
        if not 1 <= len(refs) <= MAX_LIMIT:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                f"nodes must list 1 to {MAX_LIMIT} references",
                {"field": "nodes"},
            )
        identities = [self.identity(ref, schema) for ref in refs]
        with self._read() as conn:
            present = [n for n in identities if self._state.node_exists(conn, n)]
            return self._with_neighbours(conn, present, None)

    def search_nodes(self, query: str, limit: int = 25, cursor: str | None = None) -> Subgraph:
        """Case-insensitive substring over label, keys and properties, neighbours included."""
        if not query.strip():
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT, "query must not be empty", {"field": "query"}
            )
        limit = _limit(limit)
        pattern = _like(query)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT identity FROM state_nodes WHERE identity > ? AND ("
                "lower(label) LIKE ?2 ESCAPE '\\' OR lower(keys) LIKE ?2 ESCAPE '\\' "
                "OR lower(properties) LIKE ?2 ESCAPE '\\') ORDER BY identity LIMIT ?3",
                (cursor or "", pattern, limit + 1),
            ).fetchall()
            matches = [r[0] for r in rows[:limit]]
            next_cursor = matches[-1] if len(rows) > limit else None
            return self._with_neighbours(conn, matches, next_cursor)

    def neighbors(
        self,
        ref: Mapping[str, Any],
        *,
        depth: int = 1,
        relationship_type: str | None = None,
        limit: int = 100,
        schema: LoadedSchema | None = None,
    ) -> Subgraph:
        """The k-hop neighbourhood (both directions), breadth first, at most ``limit`` nodes."""
        _bounded(depth, MAX_DEPTH, "depth")
        limit = _limit(limit)
        rtype = _type_filter(relationship_type)
        start = self.identity(ref, schema)
        with self._read() as conn:
            if not self._state.node_exists(conn, start):
                raise _not_found(start)
            seen = {start: 0}
            edges: dict[str, tuple[Any, ...]] = {}
            frontier = [start]
            truncated = False
            for hop in range(1, depth + 1):
                rows, capped = self._edges_touching(conn, frontier, rtype, MAX_EDGES)
                truncated |= capped
                next_frontier = []
                for row in rows:
                    for other in (row[2], row[3]):
                        if other not in seen:
                            if len(seen) >= limit:
                                truncated = True
                                continue
                            seen[other] = hop
                            next_frontier.append(other)
                    if row[2] in seen and row[3] in seen:
                        edges.setdefault(row[0], row)
                frontier = next_frontier
                if not frontier:
                    break
            return Subgraph(
                nodes=self._nodes(conn, seen),
                edges=[_edge(row) for row in edges.values()],
                truncated=truncated,
            )

    def find_path(
        self,
        start_ref: Mapping[str, Any],
        end_ref: Mapping[str, Any],
        *,
        max_depth: int = MAX_DEPTH,
        relationship_type: str | None = None,
        schema: LoadedSchema | None = None,
    ) -> PathResult:
        """Shortest path by breadth-first search, edges taken in either direction."""
        _bounded(max_depth, MAX_DEPTH, "max_depth")
        rtype = _type_filter(relationship_type)
        start, goal = self.identity(start_ref, schema), self.identity(end_ref, schema)
        with self._read() as conn:
            for identity in (start, goal):
                if not self._state.node_exists(conn, identity):
                    raise _not_found(identity)
            came_from: dict[str, tuple[str, tuple[Any, ...]] | None] = {start: None}
            queue = deque([(start, 0)])
            while queue and goal not in came_from:
                current, dist = queue.popleft()
                if dist == max_depth:
                    continue
                rows, _ = self._edges_touching(conn, [current], rtype, MAX_EDGES)
                for row in rows:
                    other = row[3] if row[2] == current else row[2]
                    if other not in came_from:
                        came_from[other] = (current, row)
                        queue.append((other, dist + 1))
            if goal not in came_from:
                return PathResult(found=False, length=None, nodes=[], edges=[])
            path, edge_rows = [goal], []
            step = came_from[goal]
            while step is not None:
                previous, row = step
                path.append(previous)
                edge_rows.append(row)
                step = came_from[previous]
            path.reverse()
            edge_rows.reverse()
            return PathResult(
                found=True,
                length=len(edge_rows),
                nodes=self._nodes(conn, path),
                edges=[_edge(row) for row in edge_rows],
            )

    def node_history(
        self,
        ref: Mapping[str, Any],
        *,
        limit: int = 50,
        cursor: str | None = None,
        schema: LoadedSchema | None = None,
    ) -> NodeHistory:
        """Every event in the node's stream, oldest first: its provenance trail."""
        identity = self.identity(ref, schema)
        try:
            after = int(cursor) if cursor else 0
        except ValueError:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                "cursor is not one this tool returned",
                {"field": "cursor"},
            ) from None
        page = self._log.read(after_seq=after, limit=_limit(limit), stream=node_stream(identity))
        if not page.events and after == 0:
            raise _not_found(identity)
        return NodeHistory(
            node=_ref(identity),
            entries=[history_entry(e) for e in page.events],
            next_cursor=str(page.next_after) if page.next_after is not None else None,
        )

    def stats(self, head: tuple[int, str], schema_version: str | None) -> Stats:
        with self._read() as conn:
            labels = dict(
                conn.execute(
                    "SELECT label, count(*) FROM state_nodes GROUP BY label ORDER BY label"
                )
            )
            types = dict(
                conn.execute(
                    "SELECT type, count(*) FROM state_relationships GROUP BY type ORDER BY type"
                )
            )
            stubs = conn.execute("SELECT count(*) FROM state_nodes WHERE stub").fetchone()[0]
        return Stats(
            events=head[0],
            head_hash=head[1],
            nodes=sum(labels.values()),
            relationships=sum(types.values()),
            stubs=stubs,
            labels=labels,
            relationship_types=types,
            schema_version=schema_version,
        )


def history_entry(event: Event) -> HistoryEntry:
    """One event as a line of a node's provenance trail."""
    payload, provenance = event.payload, event.provenance or {}
    changes: dict[str, Any] = {}
    remapped = None
    if event.type == NODE_WRITTEN:
        changes, remapped = payload["properties"], payload["node"].get("remapped_from")
    elif event.type == RELATIONSHIP_WRITTEN:  # in a node's stream: it was created as a stub
        changes = {"_stub": True}
    return HistoryEntry(
        seq=event.seq,
        event_id=event.event_id,
        type=event.type,
        occurred_at=format_timestamp(event.occurred_at),
        agent=event.actor.agent,
        session=event.actor.session,
        source=provenance.get("source"),
        extraction_method=provenance.get("extraction_method"),
        reliability=provenance.get("reliability"),
        confidence=provenance.get("confidence"),
        schema_version=provenance.get("schema_version"),
        remapped_from=remapped,
        changes=changes,
    )


def _not_found(identity: str) -> GateRejection:
    label, keys = parse_node_identity(identity)
    return GateRejection(
        ErrorCode.NODE_NOT_FOUND,
        f"node {identity} does not exist",
        {"label": label, "keys": keys},
    )
