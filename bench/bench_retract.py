"""What retracting a source costs: facts taken back per second, beside plain writes.

A SQLite log holds ``--facts`` nodes written by one source S (in batches of 500, as an
import writes them) and as many by another, T, a tenth of S's corroborated by T. Prints
plain writes/s (the baseline), the impact report (``--dry-run``) and the retraction in
facts/s, and, while the retraction runs, the wait of single writes from another thread
(p50, p99, max: a write waits for at most one batch's transaction). Then ``unretract``.
Nothing asserts: benchmarks print numbers.

usage: python bench/bench_retract.py [--facts 10000] [--batch 500]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected
from writegate.gate.retraction import RetractResult

SCHEMA = Path(__file__).resolve().parent.parent / "fixtures" / "seed000_schema.yaml"
ACTOR = Actor(agent="bench", session="bench")


def item(name: str, source: str, method: str = "manual") -> dict[str, Any]:
    return {
        "op": "write_node",
        "label": "Person",
        "merge_keys": {"name": name},
        "properties": {"age": len(name)},
        "source": source,
        "extraction_method": method,
        "reliability": 0.9,
    }


def written(gate: Gate, names: list[str], source: str, method: str = "manual") -> float:
    start = time.perf_counter()
    for at in range(0, len(names), 500):
        chunk = names[at : at + 500]
        result = gate.write_batch(items=[item(n, source, method) for n in chunk])
        assert not isinstance(result, Rejected), result.message
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        gate = Gate.open(Path(folder) / "log.db", default_actor=ACTOR)
        assert gate.publish_schema(SCHEMA).status == "published"
        s_names = [f"s{i:06}" for i in range(args.facts)]
        seconds = written(gate, s_names, "S")
        written(gate, [f"t{i:06}" for i in range(args.facts)], "T")
        written(gate, s_names[::10], "T", "api")  # corroborated: kept at T's confidence
        print(f"plain writes (baseline): {args.facts / seconds:,.0f} facts/s")

        start = time.perf_counter()
        report = gate.retract(source="S", dry_run=True, batch=args.batch)
        dry = time.perf_counter() - start
        assert isinstance(report, RetractResult)
        print(f"impact report: {report.facts:,} facts in {dry:.2f}s ({report.facts / dry:,.0f}/s)")

        waits: list[float] = []
        stop = threading.Event()

        def writer() -> None:
            i = 0
            while not stop.is_set():
                begun = time.perf_counter()
                gate.write_node(**{k: v for k, v in item(f"w{i:06}", "W").items() if k != "op"})
                waits.append(time.perf_counter() - begun)
                i += 1
                time.sleep(0.005)

        side = threading.Thread(target=writer)
        side.start()
        start = time.perf_counter()
        done = gate.retract(source="S", reason="bench", batch=args.batch)
        took = time.perf_counter() - start
        stop.set()
        side.join()
        assert isinstance(done, RetractResult)
        assert done.retraction is not None
        print(
            f"retraction: {done.facts:,} facts ({len(done.kept):,} kept, "
            f"{len(done.retracted):,} retracted) in {done.batches} batches, {took:.2f}s: "
            f"{done.facts / took:,.0f} facts/s"
        )
        if waits:
            ordered = sorted(waits)
            p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
            print(
                f"a concurrent write waited: p50 {statistics.median(ordered) * 1000:.1f} ms, "
                f"p99 {p99 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms "
                f"({len(ordered)} writes)"
            )
        start = time.perf_counter()
        undone = gate.unretract(done.retraction, batch=args.batch)
        took = time.perf_counter() - start
        assert not isinstance(undone, Rejected), undone.message
        print(f"unretract: {len(undone.restored) / took:,.0f} facts/s")
        start = time.perf_counter()
        ok = gate.verify().ok
        print(f"verify: {'ok' if ok else 'FAILED'} in {time.perf_counter() - start:.2f}s")
        gate.close()


if __name__ == "__main__":
    main()
