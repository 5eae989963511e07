"""Reads for a caller granted some scopes: ``GraphReader``'s, over ``ScopedState`` (the
read model with the grant in every SQL question, ``projections.state.scoped``), so a
search, a lookup, a walk or a path never meets what lies outside the grant. Each answer
of nodes says what it withheld: per hidden scope, how many relationships lead there from
the nodes shown — no ids, no names. A past read (``as_of`` / ``valid_at``, read from the
log) keeps to each node's scope then (``gate.reads.past_scopes``). Reads that cannot be
filtered (the vectors' nearest search; the old substring search) answer nothing rather
than leak. Provenance names only the observations the caller may see (``gate.reads.cited``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from writegate.eventlog import Event, Log
from writegate.eventlog.sql import Sql
from writegate.gate.reads.answers import QueryResult
from writegate.gate.reads.around import NEIGHBORS
from writegate.gate.reads.cited import keep_seen
from writegate.gate.reads.past import subgraph_then
from writegate.gate.reads.past_scopes import PastScopes
from writegate.gate.reads.query import Asked, QueryConfig, answer
from writegate.gate.reads.reader import (
    MAX_DEPTH,
    MAX_EDGES,
    MAX_LIMIT,
    GraphReader,
    NodeHistory,
    PathResult,
    Subgraph,
    _not_found,
)
from writegate.gate.reads.views import NodeView
from writegate.gate.schema import LoadedSchema
from writegate.language import RelationshipWritten, payload_of, provenance_of
from writegate.projections.state import StateProjection
from writegate.projections.state.scoped import ScopedState
from writegate.projections.state.tables import OBSERVATION_SCOPES_LAYOUT


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
        return keep_seen(page.model_copy(update={"withheld": dict(self._withheld)}), self._seen)

    def _seen(self, ids: Iterable[str]) -> set[str]:
        """The observations among ``ids`` the caller may see (none, where the read model
        keeps no observation's scope: fail closed)."""
        with self._read() as conn:
            if self._scoped.layout(conn) < OBSERVATION_SCOPES_LAYOUT:
                return set()
            return {o.id for o in self._scoped.observations(conn, ids, self._scoped.visible)}

    def search_nodes(
        self, query: str, limit: int = 25, cursor: str | None = None, neighbors: int = NEIGHBORS
    ) -> Subgraph:
        self._following = None
        return self._told(super().search_nodes(query, limit, cursor, neighbors))

    def open_nodes(
        self,
        refs: list[Mapping[str, Any]],
        schema: LoadedSchema | None = None,
        *,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
    ) -> Subgraph:
        if as_of is not None or valid_at is not None:  # the graph then, by its scopes then
            if not 1 <= len(refs) <= MAX_LIMIT:
                return super().open_nodes(refs, schema)  # refused as any read is
            scopes = self._past(as_of)
            identities = [self.identity(ref, schema, self._log) for ref in refs]
            then = subgraph_then(
                self._log,
                identities,
                as_of=scopes.as_of,
                valid_at=valid_at,
                cap=MAX_EDGES,
                scopes=scopes,
            )
            return keep_seen(then, self._seen)
        self._following = None
        return self._told(super().open_nodes(refs, schema))

    def _past(self, as_of: datetime | None) -> PastScopes:
        return PastScopes(self._log, as_of or datetime.now(UTC), self._scoped.visible)

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

    def find_path(
        self,
        start_ref: Mapping[str, Any],
        end_ref: Mapping[str, Any],
        *,
        max_depth: int = MAX_DEPTH,
        relationship_type: str | None = None,
        schema: LoadedSchema | None = None,
    ) -> PathResult:
        """A path inside the grant (one leaving it is no path); a hidden end is not found."""
        self._following = (
            None if relationship_type is None else self.relationship_type(relationship_type, schema)
        )
        self._withheld = {}
        found = super().find_path(
            start_ref,
            end_ref,
            max_depth=max_depth,
            relationship_type=relationship_type,
            schema=schema,
        )
        return keep_seen(found.model_copy(update={"withheld": dict(self._withheld)}), self._seen)

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
        """``GraphReader.graph_query`` inside the grant — now, or as the graph then stood,
        by each node's scope then — and what it withheld from the nodes it names."""
        rtype = (
            None if relationship_type is None else self.relationship_type(relationship_type, schema)
        )
        past = self._past(as_of) if as_of is not None or valid_at is not None else None
        asked = Asked(
            query,
            rtype,
            past.as_of if past is not None else None,
            valid_at,
            self._query.asked(top_k, depth, observations),
            None,  # the vectors' nearest search keeps no scopes
            past,
            # a node's scope then may not be its scope now: found in every scope's text,
            # kept to the grant by each node's scope then (``Past``)
            StateProjection() if past is not None else None,
        )
        with self._read() as conn:
            found = answer(self._log, self._scoped, self._decay(), asked)
            named = [
                *(s.entity for s in found.seeds),
                *(e for t in found.triplets for e in (t.source_entity, t.target_entity)),
            ]
            shown = list(dict.fromkeys(named))
            withheld = (
                past.withheld(shown, valid_at, rtype)
                if past is not None
                else self._scoped.withheld(conn, shown, rtype)
            )
        return keep_seen(found.model_copy(update={"withheld": withheld}), self._seen)

    def node_history(
        self,
        ref: Mapping[str, Any],
        *,
        limit: int = 50,
        cursor: str | None = None,
        schema: LoadedSchema | None = None,
    ) -> NodeHistory:
        """A node's trail, when the caller may see the node now (a node gone or hidden is
        not found, the same answer either way), but the writes that name a node it may not
        see now (a relationship to one, a merge with one)."""
        identity = self.identity(ref, schema, self._log)
        with self._read() as conn:
            if not self._scoped.node_exists(conn, identity):
                raise _not_found(identity)
            trail = super().node_history(ref, limit=limit, cursor=cursor, schema=schema)
            withheld = self._scoped.withheld(conn, [identity])
        return keep_seen(trail.model_copy(update={"withheld": withheld}), self._seen)

    def readable(self, identity: str, events: list[Event]) -> list[Event]:
        """The events of a node's trail the caller may read whole: those naming no node and
        citing no observation outside the grant (an audit shows an event as recorded, or
        not at all; a history shows the rest of a write, ``gate.reads.cited``)."""
        named = {o for e in events for o in _cited(e)}
        seen = self._seen(named) if named else set()
        return [e for e in self._shown(identity, events) if _cited(e) <= seen]

    def _shown(self, identity: str, events: list[Event]) -> list[Event]:
        with self._read() as conn:
            named = {e.event_id: _named(e, identity) for e in events}
            seen = set(
                self._scoped.visible_identities(conn, {n for v in named.values() for n in v})
            )
        return [e for e in events if named[e.event_id] <= seen]


def _cited(event: Event) -> set[str]:
    provenance = provenance_of(event)
    return set(provenance.observations or ()) if provenance is not None else set()


def _named(event: Event, identity: str) -> set[str]:
    """The nodes other than ``identity`` an event of its trail names."""
    named = {s.partition(":")[2] for s in event.streams if s.startswith("node:")}
    match payload_of(event):
        case RelationshipWritten(from_node=start, to_node=end):
            named |= {start.identity, end.identity}
        case _:
            pass
    return named - {identity}
