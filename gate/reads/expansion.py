"""From seed nodes to a bounded neighbourhood, and how relevant each relationship in it is.

``gather`` walks breadth first from the seeds, ``depth`` hops, reading each node's
relationships through a function the caller gives (the read model now, the log for a past
time), with the work bounded twice: at most ``expand`` nodes are read per hop (the best
ranked first) and at most ``neighbours`` relationships per node. Then one of two scores
ranks what was reached:

* ``decaying_bfs``: a node is worth its best seed's score times ``decay`` per hop between
  them; it rewards being close to one good seed.
* ``personalised_pagerank``: a random walk over the neighbourhood that restarts at the
  seeds in proportion to their scores (HippoRAG's retrieval); a node reached from several
  seeds collects mass from each, so the connections *between* the things a question names
  rank above any one seed's other relationships.

A relationship is worth the mean of its two ends. Pure: nothing here reads a database.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple


class Expansion(StrEnum):
    BFS = "bfs"
    PPR = "ppr"


class Link(NamedTuple):
    """One relationship as the expansion sees it (a tuple: a query makes hundreds, and a
    frozen dataclass's ``__init__`` took four times as long)."""

    identity: str
    type: str
    from_identity: str
    to_identity: str
    valid_from: str | None = None  # its valid time, where the read knows it
    valid_to: str | None = None


class Reached(NamedTuple):
    hops: int  # relationships between it and the nearest seed
    seed: str  # that seed


@dataclass
class Neighbourhood:
    reached: dict[str, Reached] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    truncated: bool = False  # a bound cut the walk: more was there


# the relationships of each node asked for (at most the bound each) and whether any had more
LinksOf = Callable[[list[str]], tuple[dict[str, list[Link]], bool]]


def gather(seeds: Sequence[str], links_of: LinksOf, depth: int, expand: int) -> Neighbourhood:
    """The seeds, the nodes within ``depth`` hops and the relationships read on the way;
    each hop reads the relationships of at most ``expand`` nodes, in the order reached."""
    hood = Neighbourhood(reached={s: Reached(0, s) for s in seeds})
    frontier = list(hood.reached)
    for hop in range(1, depth + 1):
        if len(frontier) > expand:
            frontier, hood.truncated = frontier[:expand], True
        found, capped = links_of(frontier)
        hood.truncated |= capped
        next_frontier = []
        for node in frontier:
            for link in found.get(node, []):
                hood.links.setdefault(link.identity, link)
                other = link.to_identity if link.from_identity == node else link.from_identity
                if other not in hood.reached:
                    hood.reached[other] = Reached(hop, hood.reached[node].seed)
                    next_frontier.append(other)
        frontier = next_frontier
        if not frontier:
            break
    return hood


def decaying_bfs(
    hood: Neighbourhood, seeds: Mapping[str, float], decay: float, depth: int
) -> dict[str, float]:
    """Each node's best seed score times ``decay`` per hop from that seed."""
    score = {node: seeds.get(node, 0.0) for node in hood.reached}
    for _ in range(depth):
        changed = False
        for link in hood.links.values():
            a, b = link.from_identity, link.to_identity
            for here, there in ((a, b), (b, a)):
                if score[here] * decay > score[there]:
                    score[there], changed = score[here] * decay, True
        if not changed:
            break
    return score


def personalised_pagerank(
    hood: Neighbourhood, seeds: Mapping[str, float], damping: float, iterations: int = 30
) -> dict[str, float]:
    """PageRank over the neighbourhood (relationships taken both ways) whose walk
    restarts at the seeds, weighted by their scores, with probability ``1 - damping``;
    a node with no relationship here sends its walk back to the seeds.

    On arrays: a neighbourhood holds hundreds of relationships, and a step over them in
    Python cost most of a query (5 ms at 100k people, ``bench/bench_query.py``). numpy is
    imported here, not with the module: its import starts OpenBLAS's threads, which only a
    process that answers a query needs; and not at all where no relationship joins the
    seeds (a memory of observations), whose walk only ever restarts: the seeds' weights
    are the answer, and a server's first such query does not pay numpy's import (60 ms)."""
    nodes = list(hood.reached)
    if not hood.links:
        total = sum(seeds.get(n, 0.0) for n in nodes) or 1.0
        return {n: seeds.get(n, 0.0) / total for n in nodes}
    import numpy as np  # noqa: PLC0415

    at = {node: k for k, node in enumerate(nodes)}
    restart = np.array([seeds.get(n, 0.0) for n in nodes], dtype=np.float64)
    restart /= restart.sum() or 1.0
    ends = np.array(
        [(at[link.from_identity], at[link.to_identity]) for link in hood.links.values()],
        dtype=np.intp,
    ).reshape(-1, 2)
    source = np.concatenate((ends[:, 0], ends[:, 1]))  # each relationship both ways
    target = np.concatenate((ends[:, 1], ends[:, 0]))
    degree = np.bincount(source, minlength=len(nodes)).astype(np.float64)
    alone = degree == 0
    spread = damping / np.where(alone, 1.0, degree)
    rank = restart.copy()
    for _ in range(iterations):
        back = 1 - damping + damping * rank[alone].sum()
        step = back * restart
        step += np.bincount(target, weights=(rank * spread)[source], minlength=len(nodes))
        moved = np.abs(step - rank).sum()
        rank = step
        if moved < 1e-4:
            break
    return dict(zip(nodes, rank.tolist(), strict=True))


class Ranked(NamedTuple):
    link: Link
    score: float
    hops: int  # relationships from the nearest seed to its far end
    seed: str


def ranked_links(hood: Neighbourhood, score: Mapping[str, float]) -> list[Ranked]:
    """Every relationship reached, the most relevant first (the mean of its ends' scores),
    ties by fewer hops then identity."""
    found = []
    for link in hood.links.values():
        a, b = hood.reached[link.from_identity], hood.reached[link.to_identity]
        near = a if a.hops <= b.hops else b
        worth = (score[link.from_identity] + score[link.to_identity]) / 2
        found.append(Ranked(link, worth, near.hops + 1, near.seed))
    return sorted(found, key=lambda r: (-r.score, r.hops, r.link.identity))


def expand(
    method: Expansion,
    hood: Neighbourhood,
    seeds: Mapping[str, float],
    *,
    decay: float,
    depth: int,
) -> dict[str, float]:
    """Node scores by ``method``; ``decay`` is BFS's factor per hop and PageRank's damping."""
    if method is Expansion.PPR:
        return personalised_pagerank(hood, seeds, decay)
    return decaying_bfs(hood, seeds, decay, depth)
