"""graph_query's latency beside search_nodes and the old substring scan, and which
expansion ranks better: side by side in one run, nothing asserted.

For each size, a SQLite log of that many Person nodes (a name of two words from small lists
and a number, a short bio of common words), each knowing two others and working for one of
200 organisations, is built through the gate's batches, then:
  * latency: ``graph_query`` (the default recipe: top 10 seeds, 2 hops) p50 / p99 over a
    fixed mix of questions (a name, two people, a common word, a relationship's word), beside
    ``search_nodes`` (limit 25, with its default page of neighbours) through the text index and the same
    search the way it ran before the index (a substring scan over every node's JSON);
  * ranking: questions naming two people two hops apart (A knows B knows C, asked "A C"),
    answered by each recipe; the two relationships of the path are what the question is
    about: recall@5 (both in the top five) and MRR of the first. The personalised PageRank
    sends mass from both named people into the one between them; the decaying BFS cannot
    tell that middle from either person's other friends.

usage: python bench/bench_query.py [--sizes 10000,100000] [--queries 300] [--questions 200]
                                   [--keep DIR] [--scanned N]

``--keep DIR`` keeps each built log in DIR and reuses it on the next run (building 1M
people through the gate takes over an hour here); ``--scanned N`` asks the substring scan
only the first N questions (every kind is among the first six).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_search import FIRST, LAST, WORDS, Scanned, p, timed  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.eventlog.bulk import bulk  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.gate.reads.query import RECIPES  # noqa: E402
from writegate.gate.reads.reader import GraphReader  # noqa: E402
from writegate.language import node_identity, relationship_identity  # noqa: E402

SCHEMA = ROOT / "fixtures" / "seed000_schema.yaml"
COMMON: dict[str, Any] = {"source": "bench", "extraction_method": "api", "reliability": 0.9}
ORGS = 200


def name(i: int) -> str:
    return f"{FIRST[i % len(FIRST)]} {LAST[(i // len(FIRST)) % len(LAST)]} {i}"


def knows(i: int, nodes: int) -> list[int]:
    """The two people person ``i`` knows (fixed by ``i``: the questions can find paths)."""
    rng = random.Random(i * 7919)
    return [j for j in (rng.randrange(nodes), rng.randrange(nodes)) if j != i]


def person(i: int) -> dict[str, Any]:
    bio = " ".join(random.Random(i).sample(WORDS, 4))
    return {"label": "Person", "merge_keys": {"name": name(i)}, "properties": {"bio": bio}}


def edge(rtype: str, a: str, b: dict[str, Any], label: str = "Person") -> dict[str, Any]:
    return {
        "op": "write_relationship",
        "type": rtype,
        "from_label": "Person",
        "from_keys": {"name": a},
        "to_label": label,
        "to_keys": b,
        **COMMON,
    }


def build(db: Path, nodes: int) -> None:
    started = time.perf_counter()
    with bulk(), Gate.open(db, default_actor=Actor(agent="bench")) as gate:
        gate.publish_schema(SCHEMA)
        orgs = [
            {"op": "write_node", "label": "Organization", "merge_keys": {"name": f"Org {k}"}}
            for k in range(ORGS)
        ]
        assert gate.write_batch(items=[{**o, **COMMON} for o in orgs]).status == "written"
        for start in range(0, nodes, 500):
            people = range(start, min(nodes, start + 500))
            items = [{"op": "write_node", **person(i), **COMMON} for i in people]
            assert gate.write_batch(items=items).status == "written"
        for start in range(0, nodes, 250):
            items = []
            for i in range(start, min(nodes, start + 250)):
                items.append(
                    edge("WORKS_FOR", name(i), {"name": f"Org {i % ORGS}"}, "Organization")
                )
                items += [edge("KNOWS", name(i), {"name": name(j)}) for j in knows(i, nodes)]
            assert gate.write_batch(items=items).status == "written"
    print(
        f"  (built {nodes:,} people, {3 * nodes:,} relationships in "
        f"{time.perf_counter() - started:.0f} s)"
    )


def log_of(nodes: int, keep: Path | None, scratch: Path) -> Path:
    """A log of ``nodes`` people: built in ``scratch``, or kept in ``keep`` and reused."""
    db = (keep or scratch) / f"log-{nodes}.db"
    built = db.with_suffix(".built")  # written once the build finished
    if keep is not None and built.exists():
        print(f"  (reusing {db})")
        return db
    db.parent.mkdir(parents=True, exist_ok=True)
    for stale in db.parent.glob(f"{db.name}*"):
        stale.unlink()
    build(db, nodes)
    built.touch()
    return db


def questions(nodes: int, count: int) -> list[str]:
    rng = random.Random(7)
    made = []
    for k in range(count):
        i, j = rng.randrange(nodes), rng.randrange(nodes)
        first, last, number = name(i).split()
        made.append(
            [
                name(i),
                f"{first} {last}",
                f"{name(i)} {name(j)}",
                rng.choice(WORDS),
                "works",
                number,
            ][k % 6]
        )
    return made


def latency(db: Path, nodes: int, count: int, scans: int | None = None) -> dict[str, str]:
    """p50 / p99 of each way of asking; the substring scan over the first ``scans``
    questions only, when given (it reads every node: seconds a question at 1M)."""
    asked = questions(nodes, count)
    rows: dict[str, str] = {}
    with Gate.open(db, readonly=True) as gate:
        reader = gate.reader()
        scanned = GraphReader(gate.log, Scanned())
        runs: list[tuple[str, Callable[[str], object]]] = [
            ("graph_query (default recipe)", reader.graph_query),
            ("graph_query, bfs recipe", gate.reader(RECIPES["bfs"]).graph_query),
            ("search_nodes via index", reader.search_nodes),
            ("search_nodes via substring scan", scanned.search_nodes),
        ]
        for label, run in runs:
            run(asked[0])  # warm
            mine = asked[:scans] if "scan" in label else asked
            spent = timed([lambda q=q, r=run: r(q) for q in mine])  # type: ignore[misc]
            of = f", {len(mine)} questions" if len(mine) < len(asked) else ""
            rows[f"{label}{of}: p50 / p99 (ms)"] = f"{p(spent, 0.5)} / {p(spent, 0.99)}"
    return rows


def ranking(db: Path, nodes: int, count: int) -> dict[str, str]:
    """recall@5 of both relationships of a two-hop path, and MRR of the first, per recipe."""
    rng = random.Random(11)
    paths: list[tuple[int, int, int]] = []
    while len(paths) < count:
        a = rng.randrange(nodes)
        for b in knows(a, nodes):
            for c in knows(b, nodes):
                if c not in (a, b):
                    paths.append((a, b, c))
    paths = paths[:count]
    rows: dict[str, str] = {}
    with Gate.open(db, readonly=True) as gate:
        for recipe in ("ppr", "bfs"):
            reader = gate.reader(RECIPES[recipe])
            both, reciprocal = 0, 0.0
            for a, b, c in paths:
                wanted = {
                    relationship_identity("KNOWS", who(a), who(b)),
                    relationship_identity("KNOWS", who(b), who(c)),
                }
                found = reader.graph_query(f"{name(a)} {name(c)}").triplets
                ids = [
                    relationship_identity(t.relationship, t.source_entity, t.target_entity)
                    for t in found
                ]
                both += wanted <= set(ids[:5])
                first = next((k for k, i in enumerate(ids, 1) if i in wanted), None)
                reciprocal += 1 / first if first else 0.0
            rows[f"ranking, {recipe}: recall@5 / MRR"] = (
                f"{both / len(paths):.2f} / {reciprocal / len(paths):.2f}"
            )
    return rows


def who(i: int) -> str:
    return node_identity("Person", {"name": name(i)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None, help="keep and reuse built logs")
    parser.add_argument(
        "--scanned", type=int, default=None, help="questions the substring scan answers"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    table: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for nodes in sizes:
            db = log_of(nodes, args.keep, Path(scratch))
            measured = {
                **latency(db, nodes, args.queries, args.scanned),
                **ranking(db, nodes, args.questions),
            }
            for label, value in measured.items():
                table.setdefault(label, []).append(value)
    width = max(map(len, table))
    print(f"{'people':<{width}}  " + "  ".join(f"{n:>15,}" for n in sizes))
    for label, values in table.items():
        print(f"{label:<{width}}  " + "  ".join(f"{v:>15}" for v in values))


if __name__ == "__main__":
    main()
