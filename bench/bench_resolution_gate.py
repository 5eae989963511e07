"""What entity resolution adds to a write, and whether it grows with the graph.

For graphs of synthetic, distinct person names (tests/resolution/synth.py) of each size,
times single ``write_node`` calls that create new people — the case resolution works on:
its keys are computed, the index probed, the candidates scored — on a log whose Person
label has no resolution, and on one with ``resolution: {policy: propose}``, interleaved
in one run. Writes refused as possible duplicates (they append nothing) are timed too, and
counted: the refusal is resolution's work as much as a creation is.
Prints p50/p99 in µs side by side and the ratio, and the p50 of the writes that created a
node and of those refused as duplicates, apart; then the index's own SQL replayed bare
(the two candidate probes and a new name's key rows, a transaction each, less an empty
transaction): the part of resolution's cost no Python work can remove. Nothing asserts.

usage: python bench/bench_resolution_gate.py [--sizes 1000,10000,100000] [--calls 2000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.resolution.synth import distinct_names, person_name  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate, WriteNodeResult  # noqa: E402
from writegate.gate.resolution.keys import blocking_keys  # noqa: E402

BARE = 500  # names (not in any graph) for the bare index measure
CLAIM: dict[str, Any] = {"source": "bench", "extraction_method": "api", "reliability": 0.9}


def schema(resolving: bool) -> dict[str, Any]:
    person: dict[str, Any] = {"merge_keys": ["name"]}
    if resolving:
        person["resolution"] = {"policy": "propose"}
    return {"nodes": {"Person": person}}


def gate_with(path: Path, resolving: bool, names: list[str]) -> Gate:
    gate = Gate.open(path, default_actor=Actor(agent="bench"))
    gate.publish_schema(schema(resolving))
    for start in range(0, len(names), 1000):
        items = [  # the graph is built as it is (distinct people, however alike)
            {"op": "write_node", "label": "Person", "merge_keys": {"name": n}, **CLAIM}
            | ({"resolution": "new"} if resolving else {})
            for n in names[start : start + 1000]
        ]
        out = gate.write_batch(items=items)
        assert out.status == "written", out
    return gate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--calls", type=int, default=2000)
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    pool = distinct_names(max(sizes) + options.calls + BARE, person_name)
    print(f"single write_node creating a person, {options.calls} calls per size (µs):")
    print(
        f"  {'nodes':>8} {'off p50':>8} {'off p99':>8} {'propose p50':>12} "
        f"{'propose p99':>12} {'p50 ratio':>10} {'proposed':>9} {'created p50':>12} "
        f"{'proposed p50':>13} {'index SQL bare':>15}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        for size in sizes:
            existing, fresh = pool[:size], pool[size : size + options.calls]
            gates = {
                mode: gate_with(Path(scratch) / f"{mode}-{size}.db", mode == "propose", existing)
                for mode in ("off", "propose")
            }
            times: dict[str, list[float]] = {"off": [], "propose": []}
            outcome: dict[bool, list[float]] = {True: [], False: []}  # created?
            refused = 0
            for name in fresh:  # interleaved: both see the same machine at the same moment
                for mode, gate in gates.items():
                    started = time.perf_counter()
                    out = gate.write_node(label="Person", merge_keys={"name": name}, **CLAIM)
                    took = (time.perf_counter() - started) * 1e6
                    times[mode].append(took)
                    if mode == "propose":
                        created = isinstance(out, WriteNodeResult)
                        outcome[created].append(took)
                        refused += not created
            bare = index_sql(gates["propose"], pool[-BARE:])
            for gate in gates.values():
                gate.close()
            p = {m: statistics.quantiles(t, n=100, method="inclusive") for m, t in times.items()}
            print(
                f"  {size:>8,} {p['off'][49]:>8.0f} {p['off'][98]:>8.0f} "
                f"{p['propose'][49]:>12.0f} {p['propose'][98]:>12.0f} "
                f"{p['propose'][49] / p['off'][49]:>10.2f} {refused:>9} "
                f"{_median(outcome[True]):>12.0f} {_median(outcome[False]):>13.0f} {bare:>15.0f}"
            )


def index_sql(gate: Gate, names: list[str]) -> float:
    """Median µs the blocking-key index's SQL adds to a transaction, run bare on the gate's
    own file (then rolled back: the log is not changed)."""
    conn = gate.log.connection()
    probe = (
        "SELECT identity FROM state_resolution_keys WHERE key IN ({}) "
        "GROUP BY identity ORDER BY count(*) DESC, identity LIMIT ?"
    )
    with_index: list[float] = []
    without: list[float] = []
    for i, name in enumerate(names):
        keys = sorted(f"Person/{k}" for k in blocking_keys(name, "person"))
        strong = [k for k in keys if "/x:" in k]
        weak = [k for k in keys if "/x:" not in k]
        identity = f'Person{{"name":{json.dumps(name, ensure_ascii=False)}}}'
        started = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        if i % 2:
            for wanted, cap in ((strong, 50), (weak, 12)):
                conn.execute(probe.format(",".join("?" * len(wanted))), (*wanted, cap)).fetchall()
            conn.executemany(
                "INSERT INTO state_resolution_keys (key, identity) VALUES (?, ?)",
                [(key, identity) for key in keys],
            )
        conn.execute("COMMIT")
        (with_index if i % 2 else without).append(time.perf_counter() - started)
    conn.execute("BEGIN IMMEDIATE")  # leave the log as the writes left it
    conn.executemany(
        "DELETE FROM state_resolution_keys WHERE identity = ?",
        [(f'Person{{"name":{json.dumps(n, ensure_ascii=False)}}}',) for n in names],
    )
    conn.execute("COMMIT")
    return (statistics.median(with_index) - statistics.median(without)) * 1e6


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


if __name__ == "__main__":
    main()
