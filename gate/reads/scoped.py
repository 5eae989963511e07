"""Reads for a caller granted some scopes: ``GraphReader``'s, over ``ScopedState`` (the
read model with the grant in every SQL question, ``projections.state.scoped``), so a
search, a lookup, a walk or a path never meets what lies outside the grant. Each answer
of nodes says what it withheld: per hidden scope, how many relationships lead there from
the nodes shown — no ids, no names. Reads that cannot be filtered yet (the past, read
from the log; the vectors' nearest search; the old substring search) answer nothing
rather than leak.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from writegate.eventlog import Log
from writegate.eventlog.sql import Sql
from writegate.gate.reads.answers import QueryResult
from writegate.gate.reads.query import QueryConfig
from writegate.gate.reads.reader import GraphReader, NodeHistory, Subgraph, _not_found
from writegate.gate.reads.views import NodeView
from writegate.gate.schema import LoadedSchema
from writegate.projections.state.scoped import ScopedState


class ScopedReader(GraphReader):
    """The reads of one caller who sees ``visible`` (made per call: it keeps the last
    answer's withheld counts)."""

    def __init__(
        self,
        log: Log,
        visible: frozenset[str],
        half_lives: Callable[[], Mapping[str, timedelta]] | None,
        query: QueryConfig,
    ) -> None:
        self._scoped = ScopedState(visible)
        super().__init__(log, self._scoped, half_lives, query, None)  # vectors: unfiltered
        self._following: str | None = None  # the relationship type the read follows
        self._withheld: dict[str, int] = {}

    def _nodes(self, conn: Sql, identities: Iterable[str]) -> list[NodeView]:
        """Every answer's nodes pass here, inside its snapshot: count what they lead to."""
        shown = self._scoped.visible_identities(conn, identities)
        self._withheld = self._scoped.withheld(conn, shown, self._following)
        return super()._nodes(conn, shown)

    def _told(self, page: Subgraph) -> Subgraph:
        return page.model_copy(update={"withheld": dict(self._withheld)})

    def search_nodes(self, query: str, limit: int = 25, cursor: str | None = None) -> Subgraph:
        self._following = None
        return self._told(super().search_nodes(query, limit, cursor))

    def open_nodes(
        self,
        refs: list[Mapping[str, Any]],
        schema: LoadedSchema | None = None,
        *,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
    ) -> Subgraph:
        if as_of is not None or valid_at is not None:  # the past is read from the log
            for ref in refs:  # the references are still checked
                self.identity(ref, schema)
            return Subgraph(nodes=[], edges=[], withheld={})
        self._following = None
        return self._told(super().open_nodes(refs, schema))

    def neighbors(
        self,
        ref: Mapping[str, Any],
        *,
        depth: int = 1,
        relationship_type: str | None = None,
        limit: int = 100,
        schema: LoadedSchema | None = None,
    ) -> Subgraph:
        self._following = (
            None if relationship_type is None else self.relationship_type(relationship_type, schema)
        )
        found = super().neighbors(
            ref, depth=depth, relationship_type=relationship_type, limit=limit, schema=schema
        )
        return self._told(found)

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
    ) -> QueryResult:
        if as_of is not None or valid_at is not None:  # the past is read from the log
            return QueryResult(
                triplets=[], seeds=[], observations=[], expansion="", truncated=False
            )
        return super().graph_query(
            query, top_k=top_k, depth=depth, relationship_type=relationship_type, schema=schema
        )

    def node_history(
        self,
        ref: Mapping[str, Any],
        *,
        limit: int = 50,
        cursor: str | None = None,
        schema: LoadedSchema | None = None,
    ) -> NodeHistory:
        """A node's trail, when the caller may see the node now (a node gone or hidden is
        not found, the same answer either way)."""
        identity = self.identity(ref, schema)
        with self._read() as conn:
            if not self._scoped.node_exists(conn, identity):
                raise _not_found(identity)
        return super().node_history(ref, limit=limit, cursor=cursor, schema=schema)
