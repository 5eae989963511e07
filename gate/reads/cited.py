"""The observations an answer's provenance cites, as a scoped caller may see them.

A writer granted two scopes may cite the words of one in a fact of the other. A caller who
sees only the fact's scope reads the fact, and the observations of its own scopes it was
extracted from, but never the id of one it may not see: an id is the hash of the words, so
a guess could be confirmed against it. Every scoped answer passes here before it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from writegate.gate.reads.answers import QueryResult, Triplet
from writegate.gate.reads.views import EdgeView, NodeHistory, NodeView, PathResult, Subgraph

Answer = TypeVar("Answer", Subgraph, PathResult, NodeHistory, QueryResult)
Seen = Callable[[Iterable[str]], set[str]]  # the observations among some ids the caller sees


def cited_in(answer: Subgraph | PathResult | NodeHistory | QueryResult) -> set[str]:
    """Every observation id the answer's provenance names."""
    if isinstance(answer, NodeHistory):
        return {o for entry in answer.entries for o in entry.observations or ()}
    if isinstance(answer, QueryResult):
        return {o for t in answer.triplets for o in t.provenance.observation_ids}
    views: list[NodeView | EdgeView] = [*answer.nodes, *answer.edges]
    return {o for v in views for o in v.provenance.observations or ()}


def keep_seen(answer: Answer, seen: Seen) -> Answer:
    """``answer`` naming only the observations ``seen`` lets through (itself if it names
    no other)."""
    named = cited_in(answer)
    visible = seen(named) if named else set()
    if named <= visible:
        return answer

    def kept(ids: list[str]) -> list[str]:
        return [o for o in ids if o in visible]

    def view(v: NodeView | EdgeView) -> NodeView | EdgeView:
        if not v.provenance.observations:
            return v
        said = kept(v.provenance.observations)
        return v.model_copy(
            update={"provenance": v.provenance.model_copy(update={"observations": said})}
        )

    def triplet(t: Triplet) -> Triplet:
        said = kept(t.provenance.observation_ids)
        return t.model_copy(
            update={"provenance": t.provenance.model_copy(update={"observation_ids": said})}
        )

    if isinstance(answer, Subgraph | PathResult):
        return answer.model_copy(
            update={
                "nodes": [view(n) for n in answer.nodes],
                "edges": [view(e) for e in answer.edges],
            }
        )
    if isinstance(answer, NodeHistory):
        entries = [
            e.model_copy(update={"observations": kept(e.observations)}) if e.observations else e
            for e in answer.entries
        ]
        return answer.model_copy(update={"entries": entries})
    return answer.model_copy(update={"triplets": [triplet(t) for t in answer.triplets]})
