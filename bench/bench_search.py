"""search_nodes through the read model's text index, beside today's substring scan, and what
the index adds to a single write: side by side in one run, nothing asserted.

For each size, a SQLite log of that many Person nodes (a name of two words from small
lists, a short bio of common words) is built through the gate's batches, then:
  * search: ``search_nodes`` (limit 25, with its default page of neighbours) p50 / p99 over a fixed mix of
    queries (a first name, a last name, both, a common word, a rare word, a prefix), through
    the index, and the same reads the way they ran before it (a substring of the whole query
    over every node's JSON, in identity order: the reader's path for a log without the index);
  * writes: single ``write_node`` calls of new nodes, then ``write_relationship`` calls of
    new relationships between them, p50 / p99, on two copies of the log,
    one keeping the index and one built alike without it (``Unindexed``),
    alternated so both meet the same machine (``--postgres``: only these, on a PostgreSQL
    the test harness starts, a database each).
Also a tiny relevance check: where the named node ranks for its own two names.

usage: python bench/bench_search.py [--sizes 10000,100000] [--queries 300] [--writes 600]
                                    [--postgres]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.postgres import postgres_server  # noqa: E402
from writegate.eventlog import Actor, EventCore, EventLog  # noqa: E402
from writegate.eventlog.bulk import bulk  # noqa: E402
from writegate.eventlog.postgres import PostgresEventLog  # noqa: E402
from writegate.eventlog.sql import Sql  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.gate.reads.reader import GraphReader  # noqa: E402
from writegate.projections.search import SqliteTextIndex, TextIndex  # noqa: E402
from writegate.projections.state import StateProjection  # noqa: E402

SCHEMA = ROOT / "fixtures" / "seed000_schema.yaml"
COMMON: dict[str, Any] = {"source": "bench", "extraction_method": "api", "reliability": 0.9}
FIRST = [f"{a}{b}" for a in ("Al", "Be", "Ca", "Do", "El", "Fa", "Gu", "Ha") for b in "aeiouy"]
LAST = [f"{a}{b}son" for a in ("Ker", "Lun", "Mor", "Nil", "Ost", "Pat", "Riv") for b in "abdegk"]
WORDS = [
    "works",
    "on",
    "compilers",
    "databases",
    "graphs",
    "search",
    "ranking",
    "agents",
    "memory",
    "storage",
    "teams",
]


class _Kept(SqliteTextIndex):
    """SQLite's index as it keeps node documents where no rows are handed it."""

    follows_rows = False


class Unindexed(StateProjection):
    """The state projection without its text step: what a write cost before the index (on
    SQLite a node's row keyed by its identity, holding no text, as it was then)."""

    def text_index(self, conn: Sql) -> TextIndex:
        index = super().text_index(conn)
        return _Kept() if index.follows_rows else index

    def _index_text(self, conn: Sql, event: EventCore) -> None:
        pass


class Scanned(StateProjection):
    """A read model the reader treats as one from before the index: searched by the scan."""

    def keeps_text(self, conn: Sql) -> bool:
        return False


def person(i: int) -> dict[str, Any]:
    rng = random.Random(i)
    bio = " ".join(rng.sample(WORDS, 4)) + f" since {1990 + i % 30}"
    name = f"{FIRST[i % len(FIRST)]} {LAST[(i // len(FIRST)) % len(LAST)]} {i}"
    return {
        "label": "Person",
        "merge_keys": {"name": name},
        "properties": {"age": i % 90, "bio": bio},
        **COMMON,
    }


def build(db: Path | str, nodes: int, state: StateProjection | None = None) -> None:
    """A log of ``nodes`` people, through the gate's batches (with ``state``: a SQLite log
    keeping that read model)."""
    started = time.perf_counter()
    actor = Actor(agent="bench")
    if state is None:
        opened = Gate.open(db, default_actor=actor)
    else:
        opened = Gate(EventLog(db, inline=[state]), default_actor=actor)
    with bulk(), opened as gate:
        gate.publish_schema(SCHEMA)
        for start in range(0, nodes, 500):
            items = [
                {"op": "write_node", **person(i)} for i in range(start, min(nodes, start + 500))
            ]
            assert gate.write_batch(items=items).status == "written"
    print(f"  (built {nodes:,} nodes in {time.perf_counter() - started:.0f} s)")


def queries(nodes: int, count: int) -> list[str]:
    rng = random.Random(7)
    made = []
    for k in range(count):
        i = rng.randrange(nodes)
        first, last, _ = person(i)["merge_keys"]["name"].split()
        made.append(
            [first, last, f"{first} {last}", rng.choice(WORDS), f"{last} {i}", first[:3]][k % 6]
        )
    return made


def timed(calls: list[Callable[[], object]]) -> list[float]:
    spent = []
    for call in calls:
        started = time.perf_counter()
        call()
        spent.append(time.perf_counter() - started)
    return spent


def p(values: list[float], q: float) -> str:
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3:.2f}"


def searches(db: Path, nodes: int, count: int) -> dict[str, str]:
    asked = queries(nodes, count)
    with Gate.open(db, readonly=True) as gate:
        indexed = GraphReader(gate.log, gate.state)
        scanned = GraphReader(gate.log, Scanned())
        rows: dict[str, str] = {}
        for name, reader in (("index", indexed), ("substring scan", scanned)):
            reader.search_nodes(asked[0])  # warm
            spent = timed([lambda q=q, r=reader: r.search_nodes(q) for q in asked])  # type: ignore[misc]
            rows[f"search_nodes via {name}: p50 / p99 (ms)"] = f"{p(spent, 0.5)} / {p(spent, 0.99)}"
        ranks = []
        for i in random.Random(3).sample(range(nodes), 50):
            first, last, _ = person(i)["merge_keys"]["name"].split()
            found = indexed.search_nodes(f"{first} {last} {i}", 25).nodes
            names = [n.merge_keys.get("name") for n in found]
            ranks.append(
                names.index(person(i)["merge_keys"]["name"]) + 1
                if person(i)["merge_keys"]["name"] in names
                else 99
            )
        rows["relevance: its own name ranks first (of 50)"] = str(sum(r == 1 for r in ranks))
    return rows


def writes(db: Path, folder: Path, nodes: int, count: int) -> dict[str, str]:
    """A copy of the built log, and a log built alike without the index (its node rows are
    of another shape), written alternately."""
    with_index, without = folder / f"with-index-{nodes}.db", folder / f"without-index-{nodes}.db"
    shutil.copy(db, with_index)
    build(without, nodes, Unindexed())
    actor = Actor(agent="bench")
    copies = {
        "with index": Gate(EventLog(with_index, inline=[StateProjection()]), default_actor=actor),
        "without index": Gate(EventLog(without, inline=[Unindexed()]), default_actor=actor),
    }
    return alternated(copies, count)


def writes_on_postgres(nodes: int, count: int) -> dict[str, str]:
    """The same on one PostgreSQL (the test harness's), a database each, each built alike."""
    with postgres_server() as server:
        copies = {}
        for name, state in (("with index", StateProjection()), ("without index", Unindexed())):
            dsn = server.create_database(name.replace(" ", "_"))
            build(dsn, nodes)
            log = PostgresEventLog(dsn, inline=[state])
            copies[name] = Gate(log, default_actor=Actor(agent="bench"))
        return alternated(copies, count)


def alternated(copies: dict[str, Gate], count: int) -> dict[str, str]:
    """Single writes of new nodes, then of new relationships between them, the copies
    alternated; p50 / p99 and the index's cost of each."""
    rows: dict[str, str] = {}
    for op, write in (("write_node", _node), ("write_relationship", partial(_knows, count))):
        spent: dict[str, list[float]] = {name: [] for name in copies}
        for k in range(count):
            for name, gate in copies.items() if k % 2 else reversed(copies.items()):
                started = time.perf_counter()
                write(gate, k)
                spent[name].append(time.perf_counter() - started)
        rows.update(
            {f"{op} {n}: p50 / p99 (ms)": f"{p(s, 0.5)} / {p(s, 0.99)}" for n, s in spent.items()}
        )
        ratio = statistics.median(spent["with index"]) / statistics.median(spent["without index"])
        rows[f"{op}: the index's cost at p50"] = f"{(ratio - 1) * 100:+.1f}%"
    for gate in copies.values():
        gate.close()
    return rows


def _node(gate: Gate, k: int) -> None:
    assert gate.write_node(**person(10_000_000 + k)).status == "written"


def _knows(people: int, gate: Gate, k: int) -> None:
    """A new relationship between two of the ``people`` the node writes made."""
    ends = [person(10_000_000 + i % people)["merge_keys"] for i in (k, k + 1)]
    written = gate.write_relationship(
        type="KNOWS",
        from_label="Person",
        from_keys=ends[0],
        to_label="Person",
        to_keys=ends[1],
        **COMMON,
    )
    assert written.status == "written", written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--writes", type=int, default=600)
    parser.add_argument(
        "--postgres", action="store_true", help="only the writes, on PostgreSQL (no search)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    table: dict[str, list[str]] = {}
    if args.postgres:
        for nodes in sizes:
            for label, value in writes_on_postgres(nodes, args.writes).items():
                table.setdefault(label, []).append(value)
        show(sizes, table)
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for nodes in sizes:
            db = folder / f"log-{nodes}.db"
            build(db, nodes)
            for label, value in {
                **searches(db, nodes, args.queries),
                **writes(db, folder, nodes, args.writes),
            }.items():
                table.setdefault(label, []).append(value)
    show(sizes, table)


def show(sizes: list[int], table: dict[str, list[str]]) -> None:
    width = max(map(len, table))
    print(f"{'nodes':<{width}}  " + "  ".join(f"{n:>15,}" for n in sizes))
    for label, values in table.items():
        print(f"{label:<{width}}  " + "  ".join(f"{v:>15}" for v in values))


if __name__ == "__main__":
    main()
