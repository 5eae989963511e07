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


def rrf(
    rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Items with their fused scores, best first, ties in the order first seen. An item
    repeated within one ranking counts at its first place only; each ranking's share is
    multiplied by its weight (1 unless given)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, item in enumerate(dict.fromkeys(ranking), start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))


def agreement(first: Sequence[str], second: Sequence[str]) -> float:
    """The share of the shorter ranking that the other also holds: how far two retrievers
    agree about one question (1 when either found nothing, so the other stands alone)."""
    if not first or not second:
        return 1.0
    return len(set(first) & set(second)) / min(len(first), len(second))
