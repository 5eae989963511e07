"""Replay throughput of every projection, and how fast ``follow`` makes new events visible.

Builds a log of ``--events`` events (nodes, plus a relationship for most of them, written
through ``write_batch``), then rebuilds each projection from it and prints events/s:
the state read model in its own file, the JSONL snapshot, PROV-O (N-Triples), and the
graph over Bolt (ArcadeDB from the ``arcadedb-embedded`` wheel, started here). PROV-O and
the graph are rebuilt once (each takes tens of seconds); the state and JSONL projections
several times, reporting the best and the median. Then ``follow`` runs against the graph
while single writes arrive, and the delay from each write's commit to its being in the
graph is reported as p50/p99. Nothing asserts.

usage: python bench/bench_projections.py [--events 100000] [--follow-writes 300]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.projections.arcadedb import arcadedb_server  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.projections.contract import Projector  # noqa: E402
from writegate.projections.graph import BoltTarget, GraphProjector  # noqa: E402
from writegate.projections.jsonl import JsonlProjector  # noqa: E402
from writegate.projections.prov import ProvProjector, export  # noqa: E402
from writegate.projections.runner import follow, rebuild  # noqa: E402
from writegate.projections.statestore import StateStore  # noqa: E402

SCHEMA = ROOT / "fixtures" / "seed000_schema.yaml"
COMMON: dict[str, Any] = {"source": "bench", "extraction_method": "api", "reliability": 0.9}


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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        started = time.perf_counter()
        gate = build_log(tmp / "bench.db", args.events)
        head = gate.log.head()[0]
        print(
            f"projection replay benchmark: a log of {head:,} events "
            f"(built in {time.perf_counter() - started:.1f} s)"
        )
        measure(
            gate,
            StateStore(tmp / "state.db"),
            "state read model (own SQLite file)",
            20_000,
            repeat=3,
        )
        measure(
            gate,
            JsonlProjector(tmp / "graph.jsonl", gate.log),
            "JSONL snapshot (MemoryMesh)",
            5000,  # the CLI's default; a rebuild renders once at the end whatever the size
            repeat=5,
        )
        measure(gate, ProvProjector(tmp / "prov.nt"), "PROV-O (N-Triples)", 20_000)
        if args.export:
            started = time.perf_counter()
            turtle = export(tmp / "prov.nt", "turtle")
            print(
                f"  export PROV-O as Turtle ({len(turtle) / 1e6:.0f} MB):        "
                f"{time.perf_counter() - started:6.2f} s"
            )
        with arcadedb_server(tmp / "arcadedb", heap="2g") as server:
            target = BoltTarget(server.uri, server.user, server.password, server.database, "neo4j")
            measure(gate, GraphProjector(target), "graph over Bolt (ArcadeDB)", 5000)
            follow_latency(gate, target, args.follow_writes)
        gate.close()


if __name__ == "__main__":
    main()
