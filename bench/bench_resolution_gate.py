"""What entity resolution adds to a write, and whether it grows with the graph.

For graphs of distinct synthetic people (tests/resolution/synth.py) of each size, times
single ``write_node`` calls of new people — the case resolution works on: keys computed,
the index probed, candidates scored — on a log whose Person label has no resolution and on
one with ``resolution: {policy: propose}``, interleaved in one run. Two populations:

* ``realistic``: surnames in a long tail as in census tables (``RealisticPeople``): a new
  person mostly has no near-namesake, and resolution lets the write through — the write
  the issue's budget (at most 25% over a plain write) is about;
* ``dense``: 158 given names by 173 surnames (``person_name``), so at 100k every name has
  namesakes a middle initial or a second surname apart and most writes are refused as
  possible duplicates: what refusing costs, not what resolution adds to a creating write.

Prints, on SQLite at each size and on PostgreSQL (the test harness's server,
tests/postgres.py) at ``--postgres-sizes``, p50/p99 in µs side by side; the ratio of the p50
of the writes resolution let through (created) to the plain write's — in wall time and in
the writing thread's CPU time (``time.thread_time``: on a shared machine the steadier of the
two; on PostgreSQL it leaves out the server's work) — and the p50 of those refused, apart;
then, on SQLite, the index's own SQL replayed bare (a new name's probe and its rows, a
transaction each, less an empty transaction): the part of resolution's cost no Python work
removes; and the ratio of created writes to the plain writes of the same names (the
``same-names`` columns, wall and CPU). ``--million`` adds 1,000,000 nodes on SQLite.

The graphs are made by ``bench/resolution_graphs.py``: through the gate as an import writes
(cyclic GC off), ``--jobs`` processes at once. ``--keep DIR`` keeps the SQLite graphs in DIR
for later runs (each run writes into copies); a missing one grows from a smaller kept one,
and with ``--derive`` one with resolution is made from the plain graph of the same people
(about half the work at 100k; not at 1M, where publishing the policy on the copy scores every
node for the schema's impact). 1M people take 20 to 90 minutes a graph on 2 shared cores.
Nothing asserts.

usage: python bench/bench_resolution_gate.py [--sizes 1000,10000,100000] [--million]
                                             [--postgres-sizes 100000] [--calls 2000]
                                             [--populations realistic,dense]
                                             [--keep DIR] [--jobs 2] [--derive]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.resolution_graphs import (  # noqa: E402
    CLAIM,
    MODES,
    Graph,
    make_all,
    people,
    sqlite_graphs,
    writable,
)
from tests.postgres import postgres_server  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate, WriteNodeResult  # noqa: E402
from writegate.gate.resolution import matching  # noqa: E402
from writegate.gate.resolution.keys import probes_of  # noqa: E402
from writegate.gate.schema.document import ResolutionDoc  # noqa: E402
from writegate.language import node_identity  # noqa: E402
from writegate.projections.state import StateProjection  # noqa: E402

BARE = 500  # names (not in any graph) for the bare index measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--million", action="store_true", help="and 1,000,000 on SQLite")
    parser.add_argument("--postgres-sizes", default="100000", help="'' for none")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--populations", default="realistic,dense")
    parser.add_argument("--keep", type=Path, help="keep the SQLite graphs here, and reuse them")
    parser.add_argument("--jobs", type=int, default=2, help="graphs built at once")
    parser.add_argument(
        "--derive",
        action="store_true",
        help="make a missing SQLite graph with resolution from the plain one",
    )
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",") if s]
    sizes += [1_000_000] if options.million else []
    on_postgres = [int(s) for s in options.postgres_sizes.split(",") if s]
    count = max(sizes + on_postgres) + options.calls + BARE
    keep: Path | None = options.keep
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(postgres_server()) if on_postgres else None
        for population in options.populations.split(","):
            pool = people(population, count)
            print(f"\n{population}: single write_node of a new person, {options.calls} calls (µs):")
            print(
                f"  {'backend':>10} {'nodes':>9} {'off p50':>8} {'off p99':>8} "
                f"{'propose p50':>12} {'propose p99':>12} {'created':>8} {'created p50':>12} "
                f"{'ratio':>6} {'cpu ratio':>9} {'refused p50':>12} {'index SQL bare':>15} "
                f"{'same-names':>10} {'cpu':>9}",
                flush=True,
            )
            with tempfile.TemporaryDirectory() as folder:
                scratch = Path(folder)
                graphs = sqlite_graphs(
                    keep, scratch, population, sizes, options.jobs, options.derive
                )
                for size in sizes:
                    places = writable(graphs[size], keep, scratch)
                    run("sqlite", places, pool, size, options.calls)
                    if keep is not None:
                        for copy in places.values():
                            for path in scratch.glob(f"{copy.name}*"):
                                path.unlink()
            for size in on_postgres:
                assert server is not None
                named = {m: server.create_database(f"{population}_{m}_{size}") for m in MODES}
                make_all([Graph(d, population, size, m == "propose") for m, d in named.items()], 2)
                run("postgresql", named, pool, size, options.calls)


def run(
    backend: str, places: Mapping[str, Path | str], pool: list[str], size: int, calls: int
) -> None:
    fresh = pool[size : size + calls]
    gates = {m: Gate.open(where, default_actor=Actor(agent="bench")) for m, where in places.items()}
    times: dict[str, list[float]] = {"off": [], "propose": []}
    cpu: dict[str, list[float]] = {"off": [], "created": []}
    outcome: dict[bool, list[float]] = {True: [], False: []}  # created?
    same: dict[str, list[float]] = {"wall": [], "cpu": []}  # plain writes of created names
    for name in fresh:  # interleaved: both see the same machine at the same moment
        for mode, gate in gates.items():  # plain first
            started, thread = time.perf_counter(), time.thread_time()
            out = gate.write_node(label="Person", merge_keys={"name": name}, **CLAIM)
            took = (time.perf_counter() - started) * 1e6
            spent = (time.thread_time() - thread) * 1e6
            times[mode].append(took)
            if mode == "propose":
                created = isinstance(out, WriteNodeResult)
                outcome[created].append(took)
                if created:
                    cpu["created"].append(spent)
                    same["wall"].append(times["off"][-1])
                    same["cpu"].append(cpu["off"][-1])
            else:
                cpu["off"].append(spent)
    bare = index_sql(gates["propose"], pool[-BARE:]) if backend == "sqlite" else float("nan")
    for gate in gates.values():
        gate.close()
    p = {m: statistics.quantiles(t, n=100, method="inclusive") for m, t in times.items()}
    created_p50 = _median(outcome[True])
    cpu_ratio = _median(cpu["created"]) / _median(cpu["off"])
    same_wall = created_p50 / _median(same["wall"])
    same_cpu = _median(cpu["created"]) / _median(same["cpu"])
    print(
        f"  {backend:>10} {size:>9,} {p['off'][49]:>8.0f} {p['off'][98]:>8.0f} "
        f"{p['propose'][49]:>12.0f} {p['propose'][98]:>12.0f} {len(outcome[True]):>8} "
        f"{created_p50:>12.0f} {created_p50 / p['off'][49]:>6.2f} {cpu_ratio:>9.2f} "
        f"{_median(outcome[False]):>12.0f} {bare:>15.0f} {same_wall:>10.2f} {same_cpu:>9.2f}",
        flush=True,
    )


def index_sql(gate: Gate, names: list[str]) -> float:
    """Median µs the resolution index's SQL adds to a transaction — a new name's probe (as
    the gate sends it) and its rows — run bare on the gate's own file (the rows deleted
    after, by their keys: the log is left as the writes left it)."""
    conn = gate.log.connection()
    state, rules = StateProjection(), ResolutionDoc(policy="propose")
    with_index: list[float] = []
    without: list[float] = []
    added: list[tuple[str, str]] = []
    for i, name in enumerate(names):
        normal = matching.normal_name(rules, name)
        ranges = [(f"Person/{a}", f"Person/{b}", d) for a, b, d in probes_of(normal, "person")]
        keys = matching.keys_for(rules, "Person", name, {"name": name})
        rows = [(key, node_identity("Person", {"name": name})) for key in keys]
        started = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        if i % 2:
            state.resolution_candidates(conn, ranges, matching.WINDOW)
            conn.executemany(
                "INSERT INTO state_resolution_keys (key, identity) VALUES (?, ?)", rows
            )
            added += rows
        conn.execute("COMMIT")
        (with_index if i % 2 else without).append(time.perf_counter() - started)
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("DELETE FROM state_resolution_keys WHERE key = ? AND identity = ?", added)
    conn.execute("COMMIT")
    return (statistics.median(with_index) - statistics.median(without)) * 1e6


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


if __name__ == "__main__":
    main()
