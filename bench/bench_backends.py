"""SQLite and PostgreSQL side by side, in one run, on this machine.

Prints:
  * in-process: single ``write_node`` calls (each its own transaction) — writes/s and
    p50/p99 latency — and ``write_batch`` of 100 nodes in events/s, on each backend;
  * through real servers: the aggregate accepted writes/s of ``writegate serve --http``
    with 1, 2 and 4 server processes on one PostgreSQL log, and 1 server on a SQLite log,
    under the same load (``--clients`` concurrent MCP clients, the official SDK over HTTP,
    spread round-robin over the servers, ``--writes`` each).
PostgreSQL is the harness's own (tests/postgres.py: Debian's binaries, fsync off, on this
machine's disk), so its numbers are a local server's, not a networked one's. Nothing here
asserts: numbers are for reading.

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
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.postgres import postgres_server  # noqa: E402
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


def through_servers(
    address: str, tokens: Path, servers: int, clients: int, writes: int
) -> tuple[float, float]:
    """Aggregate accepted writes/s of ``clients`` SDK clients over ``servers`` processes,
    and the share of one core the clients' own process used meanwhile (near 1.0: the
    load generator, not the servers, set the pace)."""
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

        async def run() -> tuple[float, float]:
            started, cpu = time.perf_counter(), time.process_time()
            async with anyio.create_task_group() as group:
                for c in range(clients):
                    group.start_soon(client, c)
            wall = time.perf_counter() - started
            return clients * writes / wall, (time.process_time() - cpu) / wall

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
        print(
            f"\nthrough `serve --http` ({options.clients} SDK clients x {options.writes} "
            f"writes = {total} each; {os.cpu_count()} cores shared by clients and servers):"
        )
        print(f"  {'log':<12} {'servers':>7} {'accepted writes/s':>18} {'client CPU':>11}")
        sqlite_db = scratch / "served.db"
        with Gate.open(sqlite_db) as gate:
            gate.publish_schema(SCHEMA)
        rate, busy = through_servers(
            str(sqlite_db), scratch / "sqlite.tokens.json", 1, options.clients, options.writes
        )
        print(f"  {'sqlite':<12} {1:>7} {rate:>18,.0f} {busy:>11.0%}")
        for servers in (1, 2, 4):
            dsn = server.create_database(f"bench_served_{servers}")
            with Gate.open(dsn) as gate:
                gate.publish_schema(SCHEMA)
            tokens = scratch / f"pg{servers}.tokens.json"
            rate, busy = through_servers(dsn, tokens, servers, options.clients, options.writes)
            print(f"  {'postgresql':<12} {servers:>7} {rate:>18,.0f} {busy:>11.0%}")


if __name__ == "__main__":
    main()
