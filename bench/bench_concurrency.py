"""Many writers at once: group commit against one writer and against writers taking turns.

In process, on one SQLite log shared through one ``Gate``: ``--threads`` threads each
writing new nodes with single ``write_node`` calls, beside one thread alone, with group
commit off (each append takes the write lock itself: SQLite's busy handler orders them)
and on (appends that arrive together commit in one transaction). Then over Streamable
HTTP (``writegate serve --http``, group commit on): one SDK client alone, then
``--clients`` clients at once, each in its own task on one connection pool. Prints
aggregate writes/s, p50/p99/max latency, and the appends per commit. Nothing asserts.

usage: python bench/bench_concurrency.py [--threads 20] [--writes 150] [--clients 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_mcp import SCHEMA, node  # noqa: E402
from tests.server.harness import http_agent, http_server  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.gate.server.tokens import create_token  # noqa: E402


def line(name: str, latencies: list[float], elapsed: float, extra: str = "") -> str:
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    return (
        f"  {name:<34} {len(latencies) / elapsed:>8,.0f} writes/s   p50 {q[49] * 1e3:6.2f} ms"
        f"   p99 {q[98] * 1e3:6.2f} ms   max {max(latencies) * 1e3:7.2f} ms{extra}"
    )


def in_process(gate: Gate, threads: int, writes: int, prefix: str) -> str:
    """``threads`` threads of ``writes`` single writes each, started together."""
    latencies: list[list[float]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads + 1)
    groups = gate.log.commit_groups
    before = (groups.groups, groups.grouped)

    def work(n: int) -> None:
        actor = Actor(agent=f"bench-{n}")
        start.wait()
        for i in range(writes):
            began = time.perf_counter()
            result = gate.write_node(**node(f"{prefix}-{n}", i), actor=actor)
            latencies[n].append(time.perf_counter() - began)
            assert result.status == "written", result

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    start.wait()
    began = time.perf_counter()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - began
    commits, carried = groups.groups - before[0], groups.grouped - before[1]
    per = f"   {carried / commits:5.1f} writes/commit" if commits else ""
    mode = "on " if gate.log.group_commit else "off"
    name = f"{threads:>2} thread{'s' if threads > 1 else ' '}, group commit {mode}"
    return line(name, [x for xs in latencies for x in xs], elapsed, per)


async def over_http(url: str, token: str, clients: int, writes: int, prefix: str) -> str:
    latencies: list[float] = []
    elapsed = 0.0

    async def client(n: int, ready: anyio.Event) -> None:
        async with http_agent(url, token) as agent:
            await agent.call("write_node", node(f"{prefix}-warm-{n}", 0))
            await ready.wait()
            for i in range(writes):
                began = time.perf_counter()
                assert not (await agent.call("write_node", node(f"{prefix}-{n}", i))).is_error
                latencies.append(time.perf_counter() - began)

    ready = anyio.Event()
    async with anyio.create_task_group() as tasks:
        for n in range(clients):
            tasks.start_soon(client, n, ready)
        await anyio.sleep(2 + clients * 0.2)  # every client connected and warmed up
        began = time.perf_counter()
        ready.set()
    elapsed = time.perf_counter() - began
    name = f"{clients:>2} HTTP client{'s' if clients > 1 else ' '}"
    return line(name, latencies, elapsed)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--writes", type=int, default=150, help="per thread or client")
    parser.add_argument("--clients", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "concurrency.db"
        with Gate.open(db, default_actor=Actor(agent="bench")) as gate:
            gate.publish_schema(SCHEMA)
            gate.refresh_schema_cache()
            print("in process, one Gate (SQLite, WAL, synchronous=NORMAL):")
            for grouping in (False, True):
                gate.log.group_commit = grouping
                for threads in (1, args.threads):
                    writes = args.writes * args.threads // threads  # the same total
                    print(in_process(gate, threads, writes, f"t{threads}-{grouping}"))
        token = create_token(Path(str(db) + ".tokens.json"), "bench-http", ("writer",))
        print("over Streamable HTTP, one `writegate serve --http` (group commit on):")
        with http_server(db) as server:
            for clients in (1, args.clients):
                writes = args.writes * 2 if clients == 1 else args.writes // 2
                print(anyio.run(over_http, server.url, token, clients, writes, f"h{clients}"))


if __name__ == "__main__":
    main()
