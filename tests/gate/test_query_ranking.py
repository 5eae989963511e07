"""The ranking steps of graph_query alone (pure functions, no database): reciprocal rank
fusion, and the two expansions on a graph small enough to compute by hand."""

from __future__ import annotations

import pytest

from writegate.gate.reads.expansion import (
    Link,
    Neighbourhood,
    decaying_bfs,
    gather,
    personalised_pagerank,
    ranked_links,
)
from writegate.gate.reads.fusion import agreement, rrf


def test_rrf_prefers_what_several_rankings_place_high() -> None:
    fused = rrf([["a", "b", "c"], ["b", "d"]], k=60)
    assert [item for item, _ in fused] == ["b", "a", "d", "c"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)


def test_a_ranking_weighted_nothing_leaves_the_others_order_and_only_adds_at_its_end() -> None:
    fused = rrf([["a", "b", "c"], ["c", "z"]], k=60, weights=[1.0, 0.0])
    assert [i for i, _ in fused] == ["a", "b", "c", "z"]
    half = dict(rrf([["a"], ["a"]], k=1, weights=[1.0, 0.5]))
    assert half["a"] == pytest.approx(0.75)


def test_agreement_is_the_share_of_the_shorter_ranking_the_other_holds() -> None:
    assert agreement(["a", "b", "c", "d"], ["b", "x"]) == 0.5
    assert agreement(["a", "b"], ["x", "y"]) == 0.0
    assert agreement([], ["x"]) == 1.0  # nothing to disagree with: the other stands alone


def test_rrf_with_one_ranking_keeps_its_order_and_counts_a_repeat_once() -> None:
    assert [i for i, _ in rrf([["x", "y", "x", "z"]], k=1)] == ["x", "y", "z"]
    with pytest.raises(ValueError, match="k must be"):
        rrf([["x"]], k=0)


def knows(a: str, b: str) -> Link:
    return Link(f"{a}-{b}", "KNOWS", a, b)


# A and C are named by the question; B sits between them; A and C have one other friend each
GRAPH = [knows("A", "B"), knows("B", "C"), knows("A", "X"), knows("C", "Y")]


def walk(depth: int = 2, expand: int = 10) -> Neighbourhood:
    def links_of(ids: list[str]) -> tuple[dict[str, list[Link]], bool]:
        return {i: [k for k in GRAPH if i in (k.from_identity, k.to_identity)] for i in ids}, False

    return gather(["A", "C"], links_of, depth, expand)


def test_gather_records_hops_and_the_seed_each_node_came_from() -> None:
    hood = walk()
    assert {n: (r.hops, r.seed) for n, r in hood.reached.items()} == {
        "A": (0, "A"),
        "C": (0, "C"),
        "B": (1, "A"),
        "X": (1, "A"),
        "Y": (1, "C"),
    }
    assert not hood.truncated
    assert walk(expand=1).truncated  # two seeds, one read per hop


def test_pagerank_ranks_the_node_between_two_seeds_above_either_seeds_other_friend() -> None:
    hood = walk()
    seeds = {"A": 1.0, "C": 1.0}
    rank = personalised_pagerank(hood, seeds, damping=0.5)
    assert rank["B"] > rank["X"] == pytest.approx(rank["Y"])
    assert sum(rank.values()) == pytest.approx(1.0)
    top = [r.link.identity for r in ranked_links(hood, rank)]
    assert set(top[:2]) == {"A-B", "B-C"}


def test_the_decaying_bfs_cannot_tell_the_middle_from_another_friend() -> None:
    hood = walk()
    score = decaying_bfs(hood, {"A": 1.0, "C": 1.0}, decay=0.5, depth=2)
    assert score == {"A": 1.0, "C": 1.0, "B": 0.5, "X": 0.5, "Y": 0.5}
    ranked = ranked_links(hood, score)
    assert {r.score for r in ranked} == {0.75}
    assert [r.hops for r in ranked] == [1, 1, 1, 1]
