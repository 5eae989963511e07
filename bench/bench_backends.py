"""SQLite and PostgreSQL side by side, in one run, on this machine.

Prints:
  * in-process: single ``write_node`` calls (each its own transaction) — writes/s and
    p50/p99 latency — and ``write_batch`` of 100 nodes in events/s, on each backend;
  * through real servers: the aggregate accepted writes/s of ``writegate serve --http``
    with 1, 2 and 4 server processes on one PostgreSQL log, and 1 server on a SQLite log,
    under the same load (``--clients`` concurrent MCP clients, the official SDK over HTTP,
    spread round-robin over the servers, ``--writes`` each).
PostgreSQL is the harness's own (tests/postgres.py: Debian's binaries, fsync off, on this
machine's disk), so its numbers are a local server's, not a networked one's. Beside each
served rate: the CPU time per accepted write of the clients' process, of the ``serve``
processes and of PostgreSQL (its postmaster and every backend, read from /proc), how many
of the machine's cores all of them kept busy, and how many every process on the machine
did (it may be shared): what bounds the rate. Nothing here asserts: numbers are for reading.

usage: python bench/bench_backends.py [--calls 2000] [--clients 8] [--writes 100]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.postgres import Server, postgres_server  # noqa: E402
from tests.server.harness import free_port, http_agent  # noqa: E402
from tests.server.test_pg_cluster import Cluster  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.gate.server.tokens import create_token  # noqa: E402

SCHEMA = ROOT / "fixtures" / "seed000_schema.yaml"
CLAIM = {"source": "bench", "extraction_method": "api", "reliability": 0.9}


def node(name: str) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": {"age": 42}, **CLAIM}


def percentile(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def in_process(address: str | Path, calls: int) -> tuple[float, float, float, float]:
    """(single writes/s, p50 ms, p99 ms, batched events/s) on a fresh log at ``address``."""
    with Gate.open(address, default_actor=Actor(agent="bench")) as gate:
        gate.publish_schema(SCHEMA)
        latencies = []
        started = time.perf_counter()
        for i in range(calls):
            t = time.perf_counter()
            assert gate.write_node(**node(f"single-{i}")).status == "written"
            latencies.append(time.perf_counter() - t)
        single = calls / (time.perf_counter() - started)
        batches = max(1, calls // 100)
        started = time.perf_counter()
        for b in range(batches):
            items = [{"op": "write_node", **node(f"batch-{b}-{i}")} for i in range(100)]
            assert gate.write_batch(items=items).status == "written"
        batched = batches * 100 / (time.perf_counter() - started)
    return single, percentile(latencies, 50) * 1e3, percentile(latencies, 99) * 1e3, batched


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, *, children: bool = False) -> float:
    """CPU time (user + system) of process ``pid`` so far; with ``children``, also that of
    its children that have exited (PostgreSQL's backends, when their connections closed)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    used = int(fields[11]) + int(fields[12])  # utime, stime
    if children:
        used += int(fields[13]) + int(fields[14])  # cutime, cstime
    return used / TICK


def postgres_cpu(server: Server | None) -> float:
    """PostgreSQL's CPU time so far: the postmaster, its live backends, those gone."""
    if server is None:
        return 0.0
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    total = cpu_seconds(postmaster, children=True)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == postmaster:  # ppid
                total += (int(fields[11]) + int(fields[12])) / TICK
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return total


def machine_cpu() -> float:
    """CPU seconds every process on this machine has used (all cores), from /proc/stat:
    beside ours, what else ran (the machine may be shared)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / TICK


@dataclass(frozen=True)
class Served:
    rate: float  # accepted writes/s, all clients together
    client_ms: float  # CPU milliseconds per accepted write: the clients' process
    servers_ms: float  # ... the serve processes together
    postgres_ms: float  # ... PostgreSQL (0 on SQLite)
    cores: float  # cores kept busy by all of them (this machine has os.cpu_count())
    machine: float  # cores kept busy by every process on the machine, theirs and others'


def through_servers(
    address: str, tokens: Path, servers: int, clients: int, writes: int, pg: Server | None
) -> Served:
    """Aggregate accepted writes/s of ``clients`` SDK clients over ``servers`` processes,
    with the CPU each side spent per write meanwhile."""
    cluster = Cluster(address, tokens, [free_port() for _ in range(servers)])
    keys = [create_token(tokens, f"c{servers}-{c}", ("writer",)) for c in range(clients)]
    for port in cluster.ports:
        cluster.start(port)
    try:

        async def client(c: int) -> None:
            url = cluster.url(cluster.ports[c % servers])
            async with http_agent(url, keys[c]) as agent:
                for i in range(writes):
                    out = await agent.call("write_node", node(f"s{servers}-c{c}-{i}"))
                    assert not out.is_error, out.data

        async def run() -> Served:
            pids = [process.pid for process in cluster.processes.values()]
            served = sum(cpu_seconds(pid) for pid in pids)
            database, machine = postgres_cpu(pg), machine_cpu()
            started, cpu = time.perf_counter(), time.process_time()
            async with anyio.create_task_group() as group:
                for c in range(clients):
                    group.start_soon(client, c)
            wall = time.perf_counter() - started
            calls = clients * writes
            used = (
                time.process_time() - cpu,
                sum(cpu_seconds(pid) for pid in pids) - served,
                postgres_cpu(pg) - database,
            )
            client_ms, servers_ms, postgres_ms = (u / calls * 1e3 for u in used)
            busy = (machine_cpu() - machine) / wall
            return Served(calls / wall, client_ms, servers_ms, postgres_ms, sum(used) / wall, busy)

        return anyio.run(run)
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--writes", type=int, default=100)
    options = parser.parse_args()
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        server = stack.enter_context(postgres_server())
        print(f"in process ({options.calls} single writes, then batches of 100):")
        print(f"  {'backend':<12} {'writes/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'batched ev/s':>13}")
        rows: dict[str, str | Path] = {
            "sqlite": scratch / "inproc.db",
            "postgresql": server.create_database("bench_inproc"),
        }
        for name, address in rows.items():
            single, p50, p99, batched = in_process(address, options.calls)
            print(f"  {name:<12} {single:>9,.0f} {p50:>7.2f} {p99:>7.2f} {batched:>13,.0f}")
        total = options.clients * options.writes
        load = (options.clients, options.writes)
        print(
            f"\nthrough `serve --http` ({options.clients} SDK clients x {options.writes} "
            f"writes = {total} each; {os.cpu_count()} cores shared by clients and servers):"
        )
        print(
            f"  {'log':<12} {'servers':>7} {'writes/s':>9}   CPU ms a write: "
            f"{'clients':>7} {'servers':>7} {'postgres':>8}   cores busy: {'these':>5} {'all':>5}"
        )

        def row(name: str, servers: int, served: Served) -> None:
            print(
                f"  {name:<12} {servers:>7} {served.rate:>9,.0f}   {'':>15} "
                f"{served.client_ms:>7.2f} {served.servers_ms:>7.2f} {served.postgres_ms:>8.2f} "
                f"{'':>13} {served.cores:>5.2f} {served.machine:>5.2f}"
            )

        sqlite_db = scratch / "served.db"
        with Gate.open(sqlite_db) as gate:
            gate.publish_schema(SCHEMA)
        tokens = scratch / "sqlite.tokens.json"
        row("sqlite", 1, through_servers(str(sqlite_db), tokens, 1, *load, None))
        for servers in (1, 2, 4):
            dsn = server.create_database(f"bench_served_{servers}")
            with Gate.open(dsn) as gate:
                gate.publish_schema(SCHEMA)
            tokens = scratch / f"pg{servers}.tokens.json"
            row("postgresql", servers, through_servers(dsn, tokens, servers, *load, server))


if __name__ == "__main__":
    main()
