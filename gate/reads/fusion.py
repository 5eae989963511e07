"""Reciprocal rank fusion: several rankings of the same things made into one.

Rankings from different retrievers (a text index's BM25, relationship words, later an
embedder's cosine) have scores on scales that cannot be compared, and on PostgreSQL the
text index's own scale differs from SQLite's; ranks can be. Each item scores
``sum(1 / (k + rank))`` over the rankings that hold it (rank from 1), so an item that
several rankings place high beats one that a single ranking places first. ``k`` damps the
head of each ranking (60 in the original paper, Cormack et al. 2009; a setting here).
Pure: no database, easy to test alone.
"""

from __future__ import annotations

from collections.abc import Sequence


def rrf(rankings: Sequence[Sequence[str]], k: int = 60) -> list[tuple[str, float]]:
    """Items with their fused scores, best first, ties in the order first seen. An item
    repeated within one ranking counts at its first place only."""
    if k < 1:
        raise ValueError("k must be at least 1")
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(dict.fromkeys(ranking), start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
