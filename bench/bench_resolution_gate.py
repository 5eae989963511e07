"""What entity resolution adds to a write, and whether it grows with the graph.

For graphs of distinct synthetic people (tests/resolution/synth.py) of each size, times
single ``write_node`` calls of new people — the case resolution works on: keys computed,
the index probed, candidates scored — interleaved in one run on a log per mode of the Person
label: ``off`` (no resolution), ``propose`` (``resolution: {policy: propose}``, names only)
and ``evidence`` (propose, weighing ``dob`` as a date, ``postcode`` exactly and ``city`` by
similarity). Every person in every mode carries the same date of birth, postcode and city
(``resolution_graphs.details``), so the modes differ by resolution alone. ``--modes`` picks
the resolving ones (``off`` is always run: the plain write each ratio is to). Two
populations:

* ``realistic``: surnames in a long tail as in census tables (``RealisticPeople``): a new
  person mostly has no near-namesake, and resolution lets the write through — the write
  the budgets are about (names only: at most 25% over a plain write; with evidence fields:
  at most 1.4 times a plain write, at 10k and 100k, on both backends);
* ``dense``: 158 given names by 173 surnames (``person_name``), so at 100k every name has
  namesakes a middle initial or a second surname apart and most writes are refused as
  possible duplicates: what refusing costs, not what resolution adds to a creating write.

Prints a row per mode, on SQLite at each size and on PostgreSQL (the test harness's server,
tests/postgres.py) at ``--postgres-sizes``: p50/p99 in µs; for a resolving mode, the ratio of
the p50 of the writes it let through (created) to the plain write's — in wall time and in
the writing thread's CPU time (``time.thread_time``: on a shared machine the steadier of the
two; on PostgreSQL it leaves out the server's work) — and the p50 of those refused, apart;
then, on SQLite, the index's own SQL replayed bare (a new name's probe and its rows — with
evidence, the probed nodes read and the value counts read and written too — a transaction
each, less an empty transaction): the part of resolution's cost no Python work removes; and
the ratio of created writes to the plain writes of the same names (``same-names``, wall and
CPU). ``--million`` adds 1,000,000 nodes on SQLite.

The graphs are made by ``bench/resolution_graphs.py``: through the gate as an import writes
(cyclic GC off), ``--jobs`` processes at once. ``--keep DIR`` keeps the SQLite graphs in DIR
for later runs (each run writes into copies); a missing one grows from a smaller kept one,
and with ``--derive`` one with resolution (either mode) is made from the plain graph of the
same people by publishing its schema (the publish indexes every node). On PostgreSQL every
graph is built through the gate, each run. 1M people take 20 to 90 minutes a graph on 2
shared cores. Nothing asserts.

usage: python bench/bench_resolution_gate.py [--sizes 1000,10000,100000] [--million]
                                             [--postgres-sizes 100000] [--calls 2000]
                                             [--populations realistic,dense]
                                             [--modes propose,evidence]
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
    details,
    make_all,
    people,
    rules,
    sqlite_graphs,
    writable,
)
from tests.postgres import postgres_server  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate, WriteNodeResult  # noqa: E402
from writegate.gate.resolution import matching  # noqa: E402
from writegate.gate.resolution.keys import probes_of  # noqa: E402
from writegate.language import node_identity  # noqa: E402
from writegate.projections.state import StateProjection  # noqa: E402
from writegate.projections.state.valuecounts import counted, rekey, value_counts  # noqa: E402

BARE = 500  # names (not in any graph) for the bare index measure
NAN = float("nan")
HEADER = (
    f"  {'backend':>10} {'nodes':>9} {'mode':>8} {'p50':>7} {'p99':>7} {'created':>8} "
    f"{'created p50':>12} {'ratio':>6} {'cpu ratio':>9} {'refused p50':>12} "
    f"{'index SQL bare':>15} {'same-names':>10} {'cpu':>6}"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--million", action="store_true", help="and 1,000,000 on SQLite")
    parser.add_argument("--postgres-sizes", default="100000", help="'' for none")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--populations", default="realistic,dense")
    parser.add_argument(
        "--modes", default="propose,evidence", help="resolving modes beside off (always run)"
    )
    parser.add_argument("--keep", type=Path, help="keep the SQLite graphs here, and reuse them")
    parser.add_argument("--jobs", type=int, default=2, help="graphs built at once")
    parser.add_argument(
        "--derive",
        action="store_true",
        help="make a missing SQLite graph with resolution from the plain one",
    )
    options = parser.parse_args()
    asked = {m for m in options.modes.split(",") if m}
    if unknown := asked - set(MODES):
        parser.error(f"unknown modes {sorted(unknown)}: choose among {MODES[1:]}")
    modes = tuple(m for m in MODES if m == "off" or m in asked)
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
            print(HEADER, flush=True)
            with tempfile.TemporaryDirectory() as folder:
                scratch = Path(folder)
                graphs = sqlite_graphs(
                    keep, scratch, population, sizes, options.jobs, options.derive, modes
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
                named = {m: server.create_database(f"{population}_{m}_{size}") for m in modes}
                make_all([Graph(d, population, size, m) for m, d in named.items()], options.jobs)
                run("postgresql", named, pool, size, options.calls)


def run(
    backend: str, places: Mapping[str, Path | str], pool: list[str], size: int, calls: int
) -> None:
    """Times ``calls`` new people written to each mode's graph in turn (``off`` first), and
    prints a row per mode."""
    fresh = pool[size : size + calls]
    gates = {m: Gate.open(where, default_actor=Actor(agent="bench")) for m, where in places.items()}
    wall: dict[str, list[float]] = {m: [] for m in gates}
    cpu: dict[str, list[float]] = {m: [] for m in gates}
    created: dict[str, list[int]] = {m: [] for m in gates}  # which calls it let through
    for name in fresh:  # interleaved: every mode sees the same machine at the same moment
        properties = details(name)
        for mode, gate in gates.items():
            started, thread = time.perf_counter(), time.thread_time()
            out = gate.write_node(
                label="Person", merge_keys={"name": name}, properties=properties, **CLAIM
            )
            wall[mode].append((time.perf_counter() - started) * 1e6)
            cpu[mode].append((time.thread_time() - thread) * 1e6)
            if isinstance(out, WriteNodeResult):
                created[mode].append(len(wall[mode]) - 1)
    resolving = [m for m in gates if m != "off"]
    sqlite = backend == "sqlite"
    bare = {m: index_sql(gates[m], m, pool[-BARE:]) if sqlite else NAN for m in resolving}
    for gate in gates.values():
        gate.close()
    off = statistics.quantiles(wall["off"], n=100, method="inclusive")
    print(f"  {backend:>10} {size:>9,} {'off':>8} {off[49]:>7.0f} {off[98]:>7.0f}", flush=True)
    for mode in resolving:
        p = statistics.quantiles(wall[mode], n=100, method="inclusive")
        let = set(created[mode])
        refused = [t for i, t in enumerate(wall[mode]) if i not in let]
        created_p50 = _median([wall[mode][i] for i in let])
        created_cpu = _median([cpu[mode][i] for i in let])
        same_wall = created_p50 / _median([wall["off"][i] for i in let])
        same_cpu = created_cpu / _median([cpu["off"][i] for i in let])
        print(
            f"  {backend:>10} {size:>9,} {mode:>8} {p[49]:>7.0f} {p[98]:>7.0f} {len(let):>8} "
            f"{created_p50:>12.0f} {created_p50 / off[49]:>6.2f} "
            f"{created_cpu / _median(cpu['off']):>9.2f} {_median(refused):>12.0f} "
            f"{bare[mode]:>15.0f} {same_wall:>10.2f} {same_cpu:>6.2f}",
            flush=True,
        )


def index_sql(gate: Gate, mode: str, names: list[str]) -> float:
    """Median µs the resolution index's SQL adds to a transaction — a new name's probe (as
    the gate sends it) and its rows; with evidence, the probed nodes read (at most
    ``MAX_SCORED``) and the value counts read and written — run bare on the gate's own file
    (the rows and counts taken back after: the log is left as the writes left it)."""
    conn = gate.log.connection()
    state, doc = StateProjection(), rules(mode)
    assert doc is not None
    with_index: list[float] = []
    without: list[float] = []
    added: list[tuple[str, list[str]]] = []
    for i, name in enumerate(names):
        normal = matching.normal_name(doc, name)
        ranges = [(f"Person/{a}", f"Person/{b}", d) for a, b, d in probes_of(normal, "person")]
        identity = node_identity("Person", {"name": name})
        keys = matching.keys_for(doc, "Person", name, {"name": name, **details(name)})
        started = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        if i % 2:
            probed = state.resolution_candidates(conn, ranges, matching.WINDOW)
            if doc.evidence is not None:
                near = list(dict.fromkeys(who for _, who in probed))[: matching.MAX_SCORED]
                state.nodes(conn, near)
                value_counts(conn, counted(keys))
            conn.executemany(
                "INSERT INTO state_resolution_keys (key, identity) VALUES (?, ?)",
                [(key, identity) for key in keys],
            )
            rekey(conn, keys, [])
            added.append((identity, keys))
        conn.execute("COMMIT")
        (with_index if i % 2 else without).append(time.perf_counter() - started)
    conn.execute("BEGIN IMMEDIATE")
    for identity, keys in added:
        conn.executemany(
            "DELETE FROM state_resolution_keys WHERE key = ? AND identity = ?",
            [(key, identity) for key in keys],
        )
        rekey(conn, [], keys)
    conn.execute("COMMIT")
    return (statistics.median(with_index) - statistics.median(without)) * 1e6


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else NAN


if __name__ == "__main__":
    main()
