"""A set of nodes with their neighbours (seed 001 §4.5): what ``open_nodes`` and
``search_nodes`` answer.

A search bounds each match's relationships (``each``, ``NEIGHBORS`` unless asked): 25
matches with every neighbour were some 200 views and 87 KiB of JSON, most of a search's time
and of an agent's context, for neighbours it had not asked about. Nothing is cut silently:
each match says how many of its relationships the answer leaves out
(``more_relationships``), which the ``neighbors`` tool opens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from writegate.eventlog.sql import Sql
from writegate.gate.reads.views import Decay, NodeView, Subgraph, edge_views
from writegate.projections.state import EdgeRow, StateProjection

NEIGHBORS = 2  # a search match's relationships shown by default (measured: bench_query's people)
MAX_NEIGHBORS = 100  # and at most, asked
MAX_EDGES = 1000  # relationships in one answer


def with_neighbours(
    state: StateProjection,
    conn: Sql,
    identities: list[str],
    nodes: Callable[[Sql, Iterable[str]], list[NodeView]],
    decay: Decay | None,
    cursor: str | None = None,
    each: int | None = None,
) -> Subgraph:
    """The nodes of ``identities``, their neighbours and the relationships between (at most
    ``each`` of a node's, its outgoing then incoming in identity order, when given: each
    node then says how many more it has)."""
    edges, truncated = state.edges_touching(conn, identities, None, MAX_EDGES, each)
    asked = set(identities)
    neighbour_ids = [
        other
        for row in edges
        for other in (row.from_identity, row.to_identity)
        if other not in asked
    ]
    views = nodes(conn, [*identities, *neighbour_ids])
    if each is not None:
        views = _told_more(state, conn, identities, views, edges)
    return Subgraph(
        nodes=views,
        edges=edge_views(state, conn, edges, decay),
        next_cursor=cursor,
        truncated=truncated,
    )


def _told_more(
    state: StateProjection,
    conn: Sql,
    identities: list[str],
    views: list[NodeView],
    edges: Iterable[EdgeRow],
) -> list[NodeView]:
    """``views`` with each of ``identities`` saying how many of its relationships the answer
    leaves out. Every one of ``identities`` is shown, first, in order: they are a search's
    matches, found in the same snapshot and inside the caller's scopes."""
    counts = state.relationships_counted(conn, identities)
    for edge in edges:
        for end in {edge.from_identity, edge.to_identity}:
            if end in counts:
                counts[end] -= 1
    told = [
        view.model_copy(update={"more_relationships": max(counts[identity], 0)})
        for view, identity in zip(views, identities, strict=False)
    ]
    return told + views[len(told) :]
