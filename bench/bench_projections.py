"""Replay throughput of every projection, how fast ``follow`` makes new events visible, and
what following costs as the log grows.

Throughput: builds a log of ``--events`` events (nodes, plus a relationship for most of
them, written through ``write_batch``), then rebuilds each projection from it and prints
events/s: the state read model in its own file, the JSONL snapshot, PROV-O (N-Triples), and
the graph over Bolt (ArcadeDB from the ``arcadedb-embedded`` wheel, started here). PROV-O
and the graph are rebuilt once (each takes tens of seconds); the state and JSONL projections
several times, reporting the best and the median. Then ``follow`` runs against the graph
while single writes arrive, and the delay from each write's commit to its being in the
graph is reported as p50/p99.

Scale (``--sizes``, default 1k, 100k and 1M events; logs are built once and cached under
``--cache``): side by side for each size, the JSONL projection followed in batches of
``--follow-batch`` events — each apply's time, rendering the file once asked, the process's
peak RSS — a ``replay`` with nothing to apply (opening the store included), and a PROV-O
rebuild in events/s. Each measure runs in a fresh process, so its peak RSS is its own.
Nothing asserts.

usage: python bench/bench_projections.py [--events 100000] [--follow-writes 300]
                                         [--sizes 1000,100000,1000000] [--only scale]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.projections.arcadedb import arcadedb_server  # noqa: E402
from writegate.eventlog import Actor, EventLog  # noqa: E402
from writegate.eventlog.bulk import bulk  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.projections.contract import Projector  # noqa: E402
from writegate.projections.graph import BoltTarget, GraphProjector  # noqa: E402
from writegate.projections.jsonl import JsonlProjector  # noqa: E402
from writegate.projections.prov import ProvProjector, export  # noqa: E402
from writegate.projections.runner import follow, rebuild, replay  # noqa: E402
from writegate.projections.statestore import StateStore  # noqa: E402

SCHEMA = ROOT / "fixtures" / "seed000_schema.yaml"
COMMON: dict[str, Any] = {"source": "bench", "extraction_method": "api", "reliability": 0.9}
FOLLOWED = 10  # batches applied by the follow measure


def build_log(db: Path, events: int) -> Gate:
    gate = Gate.open(db, default_actor=Actor(agent="bench"))
    gate.publish_schema(SCHEMA)
    written, i = 1, 0
    while written < events:
        items = []
        for _ in range(500):
            items.append(
                {
                    "op": "write_node",
                    "label": "Person",
                    "merge_keys": {"name": f"p{i}"},
                    "properties": {"age": i % 90, "team": f"t{i % 50}"},
                    **COMMON,
                }
            )
            if i:
                items.append(
                    {
                        "op": "write_relationship",
                        "type": "KNOWS",
                        "from_label": "Person",
                        "from_keys": {"name": f"p{i}"},
                        "to_label": "Person",
                        "to_keys": {"name": f"p{i - 1}"},
                        **COMMON,
                    }
                )
            i += 1
        items = items[: events - written]
        assert gate.write_batch(items=items).status == "written"
        written += len(items)
    return gate


def measure(gate: Gate, projector: Projector, label: str, batch: int, *, repeat: int = 1) -> None:
    """Rebuild ``repeat`` times; with several, print the best and the median rate. The best
    is the least disturbed by whatever else the machine ran (timeit's rule), the median
    says what to expect."""
    rates, applied = [], 0
    for _ in range(repeat):
        result = rebuild(gate.log, projector, batch=batch)
        rates.append(result.rate)
        applied = result.applied
    projector.close()
    best = max(rates)
    line = f"  {label:<34} {applied:>8,} events: {best:>9,.0f} events/s"
    if repeat > 1:
        line += f"  (best of {repeat}; median {statistics.median(rates):,.0f})"
    print(line)


def follow_latency(gate: Gate, target: BoltTarget, writes: int) -> None:
    projector = GraphProjector(target)
    rebuild(gate.log, projector, batch=2000)
    stop = threading.Event()
    runner = threading.Thread(
        target=follow,
        args=(gate.log, {"graph": projector}),
        kwargs={"stop": stop, "interval": 0.05},
    )
    runner.start()
    watcher = GraphProjector(target)
    delays = []
    try:
        for n in range(writes):
            result = gate.write_node(label="Person", merge_keys={"name": f"live{n}"}, **COMMON)
            committed = time.perf_counter()
            while watcher.checkpoint() < result.seq:  # type: ignore[union-attr]
                time.sleep(0.002)
            delays.append(time.perf_counter() - committed)
    finally:
        stop.set()
        runner.join()
        watcher.close()
        projector.close()
    q = statistics.quantiles(delays, n=100, method="inclusive")
    print(
        f"  follow -> graph, write to visible ({writes} writes): p50 {q[49] * 1e3:6.1f} ms, "
        f"p99 {q[98] * 1e3:6.1f} ms, max {max(delays) * 1e3:6.1f} ms"
    )


def throughput(events: int, follow_writes: int, with_export: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        started = time.perf_counter()
        gate = build_log(tmp / "bench.db", events)
        head = gate.log.head()[0]
        print(
            f"projection replay benchmark: a log of {head:,} events "
            f"(built in {time.perf_counter() - started:.1f} s)"
        )
        state = StateStore(tmp / "state.db")
        measure(gate, state, "state read model (own SQLite file)", 20_000, repeat=3)
        jsonl = JsonlProjector(tmp / "graph.jsonl", gate.log)
        # the CLI's default batch; a rebuild renders once at the end whatever the size
        measure(gate, jsonl, "JSONL snapshot (MemoryMesh)", 5000, repeat=5)
        measure(gate, ProvProjector(tmp / "prov.nt"), "PROV-O (N-Triples)", 20_000)
        if with_export:
            started = time.perf_counter()
            turtle = export(tmp / "prov.nt", "turtle")
            print(
                f"  export PROV-O as Turtle ({len(turtle) / 1e6:.0f} MB):        "
                f"{time.perf_counter() - started:6.2f} s"
            )
        with arcadedb_server(tmp / "arcadedb", heap="2g") as server:
            target = BoltTarget(server.uri, server.user, server.password, server.database, "neo4j")
            measure(gate, GraphProjector(target), "graph over Bolt (ArcadeDB)", 5000)
            follow_latency(gate, target, follow_writes)
        gate.close()


# -- scale: each measure in its own process ------------------------------------------------


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _render(projector: Projector) -> None:
    """Render the JSONL file now, where the projector defers it (``flush``)."""
    flush: Callable[[], Any] | None = getattr(projector, "flush", None)
    if flush is not None:
        flush()


def child(kind: str, log_path: str, store: str, number: int) -> dict[str, Any]:
    """One measure, in this (fresh) process; the result is printed as one JSON line."""
    log = EventLog(log_path, create=False)
    started = time.perf_counter()
    out: dict[str, Any] = {}
    if kind == "jsonl-prepare":  # the store, ``number`` events behind the head
        projector: Projector = JsonlProjector(store, log)
        result = rebuild(log, projector)
        replay(log, projector, to_seq=log.head()[0] - number)
        out["rate"] = result.rate
    elif kind == "jsonl-follow":  # batches of ``number`` events, as ``follow`` reads them
        projector = JsonlProjector(store, log)
        out["open"] = time.perf_counter() - started
        costs = []
        with bulk():
            for _ in range(FOLLOWED):
                events = log.read(after_seq=projector.checkpoint(), limit=number).events
                began = time.perf_counter()
                projector.apply(events)
                costs.append(time.perf_counter() - began)
        began = time.perf_counter()
        _render(projector)
        out["render"] = time.perf_counter() - began
        out["batch_median"], out["batch_max"] = statistics.median(costs), max(costs)
    elif kind in ("jsonl-noop", "prov-noop"):  # opening the store included
        projector = JsonlProjector(store, log) if kind == "jsonl-noop" else ProvProjector(store)
        out["applied"] = replay(log, projector).applied
    elif kind == "prov-rebuild":
        projector = ProvProjector(store)
        result = rebuild(log, projector, batch=20_000)
        out["rate"] = result.rate
    else:
        raise SystemExit(f"unknown measure {kind}")
    projector.close()
    out["seconds"] = time.perf_counter() - started
    out["rss"] = peak_rss_mb()
    log.close()
    return out


def run_child(kind: str, log: Path, store: Path, number: int = 0) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(log), str(store), str(number)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def cached_log(cache: Path, events: int) -> Path:
    db = cache / f"log-{events}.db"
    if not db.exists():
        started = time.perf_counter()
        building = cache / f"log-{events}.building.db"
        for stale in cache.glob(building.name + "*"):
            stale.unlink()
        with bulk():
            build_log(building, events).close()
        building.rename(db)
        print(f"  (built a log of {events:,} events in {time.perf_counter() - started:.0f} s)")
    return db


def scale(sizes: list[int], cache: Path, batch: int) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[str]] = {}

    def put(label: str, value: str) -> None:
        rows.setdefault(label, []).append(value)

    for events in sizes:
        log = cached_log(cache, events)
        with tempfile.TemporaryDirectory(dir=cache) as folder:
            tmp = Path(folder)
            prepared = tmp / "prepared" / "graph.jsonl"
            behind = batch * FOLLOWED
            built = run_child("jsonl-prepare", log, prepared, behind)
            put("JSONL rebuild (events/s)", f"{built['rate']:,.0f}")
            put("JSONL rebuild: peak RSS (MB)", f"{built['rss']:,.0f}")
            trial = tmp / "trial"
            shutil.copytree(prepared.parent, trial)
            followed = run_child("jsonl-follow", log, trial / "graph.jsonl", batch)
            put("JSONL follow: open (s)", f"{followed['open']:.2f}")
            put(f"JSONL follow: apply {batch} events, median (ms)",
                f"{followed['batch_median'] * 1e3:.1f}")  # fmt: skip
            put(f"JSONL follow: apply {batch} events, max (ms)",
                f"{followed['batch_max'] * 1e3:.1f}")  # fmt: skip
            put("JSONL follow: render the file once (s)", f"{followed['render']:.2f}")
            put("JSONL follow: peak RSS (MB)", f"{followed['rss']:,.0f}")
            noop = run_child("jsonl-noop", log, trial / "graph.jsonl")
            assert noop["applied"] == 0, noop
            put("JSONL replay, nothing to apply (s)", f"{noop['seconds']:.3f}")
            put("JSONL replay, nothing to apply: peak RSS (MB)", f"{noop['rss']:,.0f}")
            rebuilt = run_child("prov-rebuild", log, tmp / "prov.nt")
            put("PROV-O rebuild (events/s)", f"{rebuilt['rate']:,.0f}")
            put("PROV-O rebuild: peak RSS (MB)", f"{rebuilt['rss']:,.0f}")
            noop = run_child("prov-noop", log, tmp / "prov.nt")
            put("PROV-O replay, nothing to apply (s)", f"{noop['seconds']:.3f}")
        print(f"  ({events:,} events measured)", flush=True)
    width = max(len(label) for label in rows)
    print(f"\n{'scale: events in the log':<{width}}" + "".join(f"{n:>13,}" for n in sizes))
    for label, values in rows.items():
        print(f"{label:<{width}}" + "".join(f"{v:>13}" for v in values))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--follow-writes", type=int, default=300)
    parser.add_argument(
        "--export",
        action="store_true",
        help="Also time a Turtle export (slow on large logs: rdflib builds the whole graph in "
        "memory; try --events 10000).",
    )
    parser.add_argument("--sizes", default="1000,100000,1000000", help="Log sizes for scale.")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "wg-bench")
    parser.add_argument("--follow-batch", type=int, default=100)
    parser.add_argument("--only", choices=("throughput", "scale"))
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, log, store, number = args.child
        print(json.dumps(child(kind, log, store, int(number))))
        return
    if args.only != "scale":
        throughput(args.events, args.follow_writes, args.export)
    if args.only != "throughput":
        sizes = [int(size) for size in args.sizes.split(",")]
        scale(sizes, args.cache, args.follow_batch)


if __name__ == "__main__":
    main()
