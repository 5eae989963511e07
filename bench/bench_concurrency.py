"""Many writers at once: group commit against one writer and against writers taking turns.

In process, on one SQLite log shared through one ``Gate``: ``--threads`` threads each
writing new nodes with single ``write_node`` calls, beside one thread alone, with group
commit off (each append takes the write lock itself: SQLite's busy handler orders them)
and on (appends that arrive together commit in one transaction). Then over Streamable
HTTP (``writegate serve --http``, group commit on): one SDK client alone, then
``--clients`` clients at once, spread over ``--client-processes`` processes (so one
client process's interpreter is not what is measured). Prints aggregate writes/s,
p50/p99/max latency, and the appends per commit.

Beside them, the ceilings the same run measures: in process, the CPU a write costs on one
thread less what its SQL costs replayed bare (``bench_gate.gate_sql_ceiling``) is the time
it holds the interpreter lock, and no number of threads exceeds one write per that time;
over HTTP, the server's CPU per call (one interpreter) and the CPU per call of server and
clients together on this machine's cores. Nothing asserts.

usage: python bench/bench_concurrency.py [--threads 20] [--writes 150] [--clients 20]
                                         [--client-processes 4]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_backends import cpu_seconds  # noqa: E402
from bench.bench_gate import gate_sql_ceiling  # noqa: E402
from bench.bench_gate import node as gate_node  # noqa: E402
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


@dataclass
class Run:
    line: str
    rate: float  # writes/s
    cpu_per_write: float  # seconds of this process's CPU a write took


def in_process(gate: Gate, threads: int, writes: int, prefix: str) -> Run:
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
    began, cpu = time.perf_counter(), time.process_time()
    for worker in workers:
        worker.join()
    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
    commits, carried = groups.groups - before[0], groups.grouped - before[1]
    per = f"   {carried / commits:5.1f} writes/commit" if commits else ""
    mode = "on " if gate.log.group_commit else "off"
    name = f"{threads:>2} thread{'s' if threads > 1 else ' '}, group commit {mode}"
    total = threads * writes
    return Run(
        line(name, [x for xs in latencies for x in xs], elapsed, per), total / elapsed, cpu / total
    )


def sql_per_write(folder: Path) -> float:
    """Seconds of SQLite a single ``write_node`` costs with no Python around it: its traced
    statements replayed bare on a log of its own (the replay leaves no valid chain)."""
    with Gate.open(folder / "sql.db", default_actor=Actor(agent="bench")) as gate:
        gate.publish_schema(
            Path(__file__).resolve().parent.parent / "fixtures" / "seed000_schema.yaml"
        )
        for i in range(200):
            gate.write_node(**gate_node(f"sql-{i}"))
        return 1 / gate_sql_ceiling(gate, 3000, 1)


def gil_ceiling(single: Run, sql: float) -> str:
    held = single.cpu_per_write - sql
    return (
        f"  ceiling: a write costs {single.cpu_per_write * 1e6:.0f} µs of CPU on one thread, "
        f"{sql * 1e6:.0f} µs of it SQLite's own statements (replayed bare);\n"
        f"  the other {held * 1e6:.0f} µs hold the interpreter lock, so no number of threads "
        f"exceeds {1 / held:,.0f} writes/s = {1 / held / single.rate:.2f}x one thread"
    )


async def over_http(
    url: str, token: str, clients: int, writes: int, prefix: str, go: Barrier | None = None
) -> list[float]:
    """``clients`` SDK clients of ``writes`` writes each, started together once every one is
    connected (and every client process has reached ``go``, a barrier they share): their
    latencies."""
    latencies: list[float] = []
    connected = 0
    ready = anyio.Event()

    async def client(n: int) -> None:
        nonlocal connected
        async with http_agent(url, token) as agent:
            await agent.call("write_node", node(f"{prefix}-warm-{n}", 0))
            connected += 1
            await ready.wait()
            for i in range(writes):
                began = time.perf_counter()
                assert not (await agent.call("write_node", node(f"{prefix}-{n}", i))).is_error
                latencies.append(time.perf_counter() - began)

    async with anyio.create_task_group() as tasks:
        for n in range(clients):
            tasks.start_soon(client, n)
        while connected < clients:
            await anyio.sleep(0.05)
        if go is not None:
            await anyio.to_thread.run_sync(go.wait)
        ready.set()
    return latencies


def _client_process(
    url: str, token: str, clients: int, writes: int, prefix: str, go: Barrier, out: Any
) -> None:
    began = time.process_time()
    latencies = anyio.run(over_http, url, token, clients, writes, prefix, go)
    out.put((latencies, time.process_time() - began))


def http_run(
    url: str, token: str, server_pid: int, clients: int, processes: int, writes: int
) -> tuple[str, float, float, float]:
    """``clients`` clients spread over ``processes`` processes: the line, writes/s, and the
    server's and the clients' CPU seconds per write."""
    context = multiprocessing.get_context("spawn")
    processes = min(processes, clients)
    go, out = context.Barrier(processes + 1), context.Queue()
    shares = [
        clients // processes + (1 if p < clients % processes else 0) for p in range(processes)
    ]
    workers = [
        context.Process(
            target=_client_process, args=(url, token, share, writes, f"h{clients}-{p}", go, out)
        )
        for p, share in enumerate(shares)
    ]
    for worker in workers:
        worker.start()
    go.wait()  # every client connected and warmed up
    began, server_cpu = time.perf_counter(), cpu_seconds(server_pid)
    results = [out.get() for _ in workers]
    elapsed, server_cpu = time.perf_counter() - began, cpu_seconds(server_pid) - server_cpu
    for worker in workers:
        worker.join()
    latencies = [x for result in results for x in result[0]]
    client_cpu = sum(result[1] for result in results)
    name = f"{clients:>2} HTTP client{'s' if clients > 1 else ' '} in {processes} process{'es' if processes > 1 else ''}"
    total = len(latencies)
    return line(name, latencies, elapsed), total / elapsed, server_cpu / total, client_cpu / total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--writes", type=int, default=150, help="per thread or client")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--client-processes", type=int, default=4)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "concurrency.db"
        with Gate.open(db, default_actor=Actor(agent="bench")) as gate:
            gate.publish_schema(SCHEMA)
            gate.refresh_schema_cache()
            print(f"in process, one Gate (SQLite, WAL, synchronous=NORMAL), {cores} cores:")
            singles = []
            for grouping in (False, True):
                gate.log.group_commit = grouping
                for threads in (1, args.threads):
                    writes = args.writes * args.threads // threads  # the same total
                    run = in_process(gate, threads, writes, f"t{threads}-{grouping}")
                    print(run.line)
                    if threads == 1:
                        singles.append(run)
        print(gil_ceiling(singles[-1], sql_per_write(Path(folder))))
        token = create_token(Path(str(db) + ".tokens.json"), "bench-http", ("writer",))
        print("over Streamable HTTP, one `writegate serve --http` (group commit on):")
        with http_server(db) as server:
            pid = server.process.pid
            text, one, one_server, one_client = http_run(
                server.url, token, pid, 1, 1, args.writes * 2
            )
            print(text)
            text, many, server_cpu, client_cpu = http_run(
                server.url, token, pid, args.clients, args.client_processes, args.writes // 2
            )
            print(f"{text}   {many / one:.2f}x one client")
        print(
            f"  CPU per call: server {server_cpu * 1e3:.2f} ms, clients {client_cpu * 1e3:.2f} ms "
            f"(one client alone: {one_server * 1e3:.2f} + {one_client * 1e3:.2f} ms)\n"
            f"  ceilings: one server interpreter {1 / server_cpu:,.0f} calls/s; server and clients "
            f"on {cores} cores {cores / (server_cpu + client_cpu):,.0f} calls/s "
            f"= {min(1 / server_cpu, cores / (server_cpu + client_cpu)) / one:.2f}x one client"
        )


if __name__ == "__main__":
    main()
