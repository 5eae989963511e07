"""What agents read back: bounded views of the state read model, each carrying provenance.

An agent's context window is small, so every read is capped (``limit`` with a
cursor, or an explicit ``truncated`` flag) and every node and edge says where it
came from (``gate.reads.views``). Each read runs in one snapshot of the log: a result never
mixes two states of it. The CLI's read commands call the same functions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

from writegate.eventlog import Event, Log
from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.identifiers import check_identifier
from writegate.gate.moments import cursor_after
from writegate.gate.personal import lookup
from writegate.gate.reads.answers import QueryResult
from writegate.gate.reads.around import MAX_EDGES, MAX_NEIGHBORS, NEIGHBORS, with_neighbours
from writegate.gate.reads.past import subgraph_then
from writegate.gate.reads.query import DEFAULT as DEFAULT_QUERY
from writegate.gate.reads.query import Asked, QueryConfig, answer
from writegate.gate.reads.recall import Nearest
from writegate.gate.reads.views import (
    Decay,
    HistoryEntry,
    NodeHistory,
    NodeView,
    PathResult,
    Provenance,
    Stats,
    Subgraph,
    edge_views,
    history_entry,
    index_page,
    node_views,
    ref_of,
)
from writegate.gate.schema import LoadedSchema
from writegate.language import NodeRef, node_identity, node_stream, pseudonymous, said_of
from writegate.projections.state import EdgeRow, StateProjection

MAX_LIMIT = 500
MAX_DEPTH = 6
WHOLE_GRAPH_NODES = 1000  # the default bound of ``whole_graph``; relationships: four times it

__all__ = [
    "MAX_DEPTH",
    "MAX_EDGES",
    "WHOLE_GRAPH_NODES",
    "GraphReader",
    "HistoryEntry",
    "NodeHistory",
    "NodeView",
    "PathResult",
    "Provenance",
    "QueryResult",
    "Stats",
    "Subgraph",
]


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


def _type_filter(relationship_type: str | None, schema: LoadedSchema | None) -> str | None:
    if relationship_type is None:
        return None
    return GraphReader.relationship_type(relationship_type, schema)


class GraphReader:
    """Read-only queries over the state read model (and, for history, the log) of one log."""

    def __init__(
        self,
        log: Log,
        state: StateProjection,
        half_lives: Callable[[], Mapping[str, timedelta]] | None = None,
        query: QueryConfig = DEFAULT_QUERY,
        nearest: Nearest | None = None,  # an embedder's search (``gate.reads.recall``)
    ) -> None:
        self._log = log
        self._nearest = nearest
        self._state = state
        self._half_lives = half_lives  # the schema's, read per call: it may be republished
        self._query = query  # how graph_query answers (a recipe of ``gate.reads.query``)

    def _decay(self) -> Decay | None:
        """Read-time decay of confidences, if the schema declares half-lives."""
        lives = self._half_lives() if self._half_lives else {}
        return Decay(lives, datetime.now(UTC)) if lives else None

    def _read(self) -> AbstractContextManager[Sql]:
        """One snapshot of the log: a result never mixes two states of it."""
        return self._log.snapshot()

    # -- identity -----------------------------------------------------------------

    @staticmethod
    def identity(ref: Mapping[str, Any], schema: LoadedSchema | None, log: Log | None) -> str:
        """The identity a reference names (its canonical label's; a personal node's pseudonym)."""
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
        with pseudonymous(lookup(schema, log)):
            return node_identity(label, keys)

    @staticmethod
    def relationship_type(name: str, schema: LoadedSchema | None) -> str:
        """The relationship type a name means; a synonym (``WORKS_AT``) reads its canonical one."""
        name = check_identifier(name.removeprefix(":"), "relationship_type")
        if schema is not None and schema.registry.get_relationship_type(name) is None:
            name = schema.registry.relationship_remap_target(name) or name
        return name

    # -- node lookups -----------------------------------------------------------------

    def _nodes(self, conn: Sql, identities: Iterable[str]) -> list[NodeView]:
        return node_views(self._state, conn, self._state.nodes(conn, identities), self._decay())

    def _with_neighbours(
        self, conn: Sql, identities: list[str], cursor: str | None, each: int | None = None
    ) -> Subgraph:
        return with_neighbours(
            self._state, conn, identities, self._nodes, self._decay(), cursor, each
        )

    def open_nodes(
        self,
        refs: list[Mapping[str, Any]],
        schema: LoadedSchema | None = None,
        *,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
    ) -> Subgraph:
        """The nodes, their neighbours and the edges between: now, or as the log knew them
        at ``as_of`` (record time), or as true at ``valid_at`` (valid time, as known at
        ``as_of``) — those read from the log (``gate.reads.past``), edges with their valid time."""
        if not 1 <= len(refs) <= MAX_LIMIT:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                f"nodes must list 1 to {MAX_LIMIT} references",
                {"field": "nodes"},
            )
        identities = [self.identity(ref, schema, self._log) for ref in refs]
        if as_of is not None or valid_at is not None:
            moment = as_of or datetime.now(UTC)
            return subgraph_then(
                self._log, identities, as_of=moment, valid_at=valid_at, cap=MAX_EDGES
            )
        with self._read() as conn:
            present = [n for n in identities if self._state.node_exists(conn, n)]
            return self._with_neighbours(conn, present, None)

    def search_nodes(
        self, query: str, limit: int = 25, cursor: str | None = None, neighbors: int = NEIGHBORS
    ) -> Subgraph:
        """The nodes whose words (label, merge keys, string properties) begin with any word
        of ``query``, the most relevant first (the read model's text index), with at most
        ``neighbors`` of each one's relationships and the neighbours they lead to; each
        match says how many more it has. A read-only copy of a log from before the index
        is searched the old way: a substring of the whole query, in identity order."""
        if not query.strip():
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT, "query must not be empty", {"field": "query"}
            )
        limit = _limit(limit)
        each = _bounded(neighbors + 1, MAX_NEIGHBORS + 1, "neighbors") - 1
        with self._read() as conn:
            if not self._state.keeps_text(conn):
                found = self._state.search(conn, query, cursor or "", limit + 1)
                matches = found[:limit]
                next_cursor = matches[-1] if len(found) > limit else None
                return self._with_neighbours(conn, matches, next_cursor, each)
            page, next_cursor = index_page(self._state, conn, query, "node", limit, cursor)
            return self._with_neighbours(conn, page, next_cursor, each)

    def graph_query(
        self,
        query: str,
        *,
        top_k: int | None = None,
        depth: int | None = None,
        relationship_type: str | None = None,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
        schema: LoadedSchema | None = None,
        observations: int | None = None,
    ) -> QueryResult:
        """Ranked triplets answering ``query`` in words: seed nodes from the text index,
        ``depth`` hops around them, each triplet with its provenance and why it ranked
        (``gate.reads.query``), and the ``observations`` best observations (default: the
        recipe's); now, or as the graph stood at ``as_of`` / ``valid_at``."""
        rtype = _type_filter(relationship_type, schema)
        config = self._query.asked(top_k, depth, observations)
        asked = Asked(query, rtype, as_of, valid_at, config, self._nearest)
        return answer(self._log, self._state, self._decay(), asked)

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
        decay = self._decay()
        _bounded(depth, MAX_DEPTH, "depth")
        limit = _limit(limit)
        rtype = _type_filter(relationship_type, schema)
        start = self.identity(ref, schema, self._log)
        with self._read() as conn:
            if not self._state.node_exists(conn, start):
                raise _not_found(start)
            seen = {start: 0}
            edges: dict[str, EdgeRow] = {}
            frontier = [start]
            truncated = False
            for hop in range(1, depth + 1):
                rows, capped = self._state.edges_touching(conn, frontier, rtype, MAX_EDGES)
                truncated |= capped
                next_frontier = []
                for row in rows:
                    for other in (row.from_identity, row.to_identity):
                        if other not in seen:
                            if len(seen) >= limit:
                                truncated = True
                                continue
                            seen[other] = hop
                            next_frontier.append(other)
                    if row.from_identity in seen and row.to_identity in seen:
                        edges.setdefault(row.identity, row)
                frontier = next_frontier
                if not frontier:
                    break
            return Subgraph(
                nodes=self._nodes(conn, seen),
                edges=edge_views(self._state, conn, edges.values(), decay),
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
        decay = self._decay()
        _bounded(max_depth, MAX_DEPTH, "max_depth")
        rtype = _type_filter(relationship_type, schema)
        start = self.identity(start_ref, schema, self._log)
        goal = self.identity(end_ref, schema, self._log)
        with self._read() as conn:
            for identity in (start, goal):
                if not self._state.node_exists(conn, identity):
                    raise _not_found(identity)
            came_from: dict[str, tuple[str, EdgeRow] | None] = {start: None}
            queue = deque([(start, 0)])
            while queue and goal not in came_from:
                current, dist = queue.popleft()
                if dist == max_depth:
                    continue
                rows, _ = self._state.edges_touching(conn, [current], rtype, MAX_EDGES)
                for row in rows:
                    other = row.to_identity if row.from_identity == current else row.from_identity
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
                edges=edge_views(self._state, conn, edge_rows, decay),
            )

    def node_history(
        self,
        ref: Mapping[str, Any],
        *,
        limit: int = 50,
        cursor: str | None = None,
        schema: LoadedSchema | None = None,
    ) -> NodeHistory:
        """Every event in the node's stream and its corroborations', oldest first: its
        provenance trail."""
        identity = self.identity(ref, schema, self._log)
        after = cursor_after(cursor)
        page = self._log.read(
            after_seq=after, limit=_limit(limit), stream=said_of(node_stream(identity))
        )
        if not page.events and after == 0:
            raise _not_found(identity)
        return NodeHistory(
            node=ref_of(identity),
            entries=[history_entry(e) for e in self._shown(identity, page.events)],
            next_cursor=str(page.next_after) if page.next_after is not None else None,
        )

    def _shown(self, identity: str, events: list[Event]) -> list[Event]:
        """The events of a node's trail this reader shows (a scoped one: fewer)."""
        return events

    def whole_graph(self, max_nodes: int = WHOLE_GRAPH_NODES) -> Subgraph:
        """Every node and relationship, or ``LIMIT_EXCEEDED`` when there are more than
        ``max_nodes`` nodes or four times as many relationships: a picture of a graph cut at
        an arbitrary place would mislead, so a large one is refused, not cut."""
        decay = self._decay()
        max_edges = 4 * max_nodes
        with self._read() as conn:
            counts = self._state.counts(conn)
            nodes = sum(counts.labels.values())
            relationships = sum(counts.relationship_types.values())
            if nodes > max_nodes or relationships > max_edges:
                raise GateRejection(
                    ErrorCode.LIMIT_EXCEEDED,
                    f"the graph has {nodes:,} nodes and {relationships:,} relationships, more "
                    f"than {max_nodes:,} nodes or {max_edges:,} relationships",
                    {"limit": "max_nodes", "max": max_nodes, "got": nodes},
                )
            identities = self._state.search(conn, "", "", max_nodes)  # "" is in every node
            rows, _ = self._state.edges_touching(conn, identities, None, max_edges)
            return Subgraph(
                nodes=self._nodes(conn, identities),
                edges=edge_views(self._state, conn, rows, decay),
            )

    def stats(self, head: tuple[int, str], schema_version: str | None) -> Stats:
        with self._read() as conn:
            counts = self._state.counts(conn)
        return Stats(
            events=head[0],
            head_hash=head[1],
            nodes=sum(counts.labels.values()),
            relationships=sum(counts.relationship_types.values()),
            stubs=counts.stubs,
            labels=counts.labels,
            relationship_types=counts.relationship_types,
            schema_version=schema_version,
        )


def _not_found(identity: str) -> GateRejection:
    ref = NodeRef.parse(identity)
    return GateRejection(
        ErrorCode.NODE_NOT_FOUND,
        f"node {identity} does not exist",
        {"label": ref.label, "keys": ref.keys},
    )
