"""What retracting a source costs: facts taken back per second, beside plain writes.

A SQLite log holds ``--facts`` nodes written by one source S (in batches of 500, as an
import writes them) and as many by another, T, a tenth of S's corroborated by T. Prints
plain writes/s (the baseline), the impact report (``--dry-run``), the retraction in facts/s
and ``unretract``; then another source U's as many facts while another thread writes, with
the wait of its single writes (p50, p99, max) beside the longest batch (a write waits for
at most the batch running when it arrived); then S again, whose facts now all have
histories to search (the retraction and its undoing).
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


def timed_retraction(
    gate: Gate, batch: int, batches: list[float], source: str = "S"
) -> RetractResult:
    """Retract ``source``, each batch's time (from one batch's commit to the next's) in ``batches``."""
    last = [time.perf_counter()]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        batches.append(now - last[0])
        last[0] = now

    done = gate.retract(source=source, reason="bench", batch=batch, progress=progress)
    assert isinstance(done, RetractResult)
    assert done.retraction is not None
    return done


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
        written(gate, [f"u{i:06}" for i in range(args.facts)], "U")  # taken back beside a writer
        print(f"plain writes (baseline): {args.facts / seconds:,.0f} facts/s")

        start = time.perf_counter()
        report = gate.retract(source="S", dry_run=True, batch=args.batch)
        dry = time.perf_counter() - start
        assert isinstance(report, RetractResult)
        print(f"impact report: {report.facts:,} facts in {dry:.2f}s ({report.facts / dry:,.0f}/s)")

        batches: list[float] = []
        done = timed_retraction(gate, args.batch, batches)
        print(
            f"retraction: {done.facts:,} facts ({len(done.kept):,} kept, "
            f"{len(done.retracted):,} retracted) in {done.batches} batches, {sum(batches):.2f}s: "
            f"{done.facts / sum(batches):,.0f} facts/s (a batch: p50 "
            f"{statistics.median(batches) * 1000:.0f} ms, max {max(batches) * 1000:.0f} ms)"
        )
        start = time.perf_counter()
        undone = gate.unretract(done.retraction or "", batch=args.batch)
        took = time.perf_counter() - start
        assert not isinstance(undone, Rejected), undone.message
        print(f"unretract: {len(undone.restored) / took:,.0f} facts/s")

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
        batches.clear()
        beside = timed_retraction(gate, args.batch, batches, "U")
        stop.set()
        side.join()
        ordered = sorted(waits)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        print(
            f"source U beside a writer: {beside.facts / sum(batches):,.0f} facts/s; its writes "
            f"waited p50 {statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
            f"max {ordered[-1] * 1000:.1f} ms ({len(ordered)} writes) against the longest "
            f"batch's {max(batches) * 1000:.0f} ms"
        )
        batches.clear()
        again = timed_retraction(gate, args.batch, batches)  # each fact's history replayed
        print(
            f"S again after its undoing (every fact reverted from its history): "
            f"{again.facts / sum(batches):,.0f} facts/s"
        )
        start = time.perf_counter()
        ok = gate.verify().ok
        print(f"verify: {'ok' if ok else 'FAILED'} in {time.perf_counter() - start:.2f}s")
        gate.close()


if __name__ == "__main__":
    main()
