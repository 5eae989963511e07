"""writegate over MCP against the protocol's own floor: the SDK's no-op server, same client.

Write calls: for each log size (default 100k and 1M nodes, built once through
``Gate.write_batch`` and cached under ``--cache``; each run writes to a copy), a
writegate server and the no-op server (``bench/noop_server.py``) run side by side and the
client alternates one call to each — ``write_node`` of a new node, and the no-op tool with
the same arguments — over stdio, then over Streamable HTTP (bearer token for writegate).
Prints p50/p99 of each and writegate's p50 over the no-op's. Over stdio a third server
takes its turn: the no-op on writegate's own stdio transport (no worker threads), so the
gate's work alone shows beside the ratio to the SDK's floor.

Sessions: ``--sessions`` SDK clients over HTTP, one after another, each opening a session
(the ``initialize`` handshake, as clients of the 2025 protocol do), calling nothing and
closing it, against each server; prints each server process's resident memory every
quarter of the way and the median time to open a session. Nothing asserts.

usage: python bench/bench_mcp_floor.py [--sizes 100000,1000000] [--calls 400]
                                       [--sessions 10000] [--cache /tmp/wg-bench-floor]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_mcp import PROVENANCE, node, writegate_db  # noqa: E402
from tests.server.harness import (  # noqa: E402
    free_port,
    http_agent,
    http_server,
    stdio_agent,
    stop,
    wait_listening,
)
from writegate.eventlog.bulk import bulk  # noqa: E402
from writegate.gate.server.tokens import create_token  # noqa: E402

NOOP = ROOT / "bench" / "noop_server.py"
Call = Callable[[int], Awaitable[Any]]


def cached_nodes(cache: Path, size: int) -> Path:
    """A log of ``size`` nodes, built once."""
    db = cache / f"nodes-{size}.db"
    if not db.exists():
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(dir=cache) as folder, bulk():
            shutil.move(writegate_db(size, Path(folder)), db)
        print(f"  (built a log of {size:,} nodes in {time.perf_counter() - started:.0f} s)")
    return db


def noop_args(i: int) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": f"noop-{i}"}, **PROVENANCE}


async def alternate(calls: int, *servers: Call) -> list[list[float]]:
    """``calls`` calls to each server, one to each in turn (after a warm-up): the latencies."""
    for i in range(20):
        for call in servers:
            await call(-1 - i)
    times: list[list[float]] = [[] for _ in servers]
    for i in range(calls):
        for call, into in zip(servers, times, strict=True):
            began = time.perf_counter()
            await call(i)
            into.append(time.perf_counter() - began)
    return times


def _q(xs: list[float]) -> tuple[float, float]:
    cut = statistics.quantiles(xs, n=100, method="inclusive")
    return cut[49] * 1e3, cut[98] * 1e3


def report(transport: str, size: int, noop: list[float], write: list[float]) -> None:
    (n50, n99), (w50, w99) = _q(noop), _q(write)
    print(
        f"  {transport:<5} {size:>9,} nodes: no-op p50 {n50:5.2f} ms p99 {n99:5.2f} ms   "
        f"write_node p50 {w50:5.2f} ms p99 {w99:5.2f} ms   p50 ratio {w50 / n50:4.2f}x"
    )


def report_pipes(noop: list[float], write: list[float]) -> None:
    """writegate against the no-op on writegate's own stdio transport: the gate's work alone."""
    (n50, n99), (w50, _) = _q(noop), _q(write)
    print(
        f"{'':23}the no-op on writegate's stdio transport: p50 {n50:5.2f} ms p99 {n99:5.2f} ms"
        f"   write_node's p50 over it {w50 / n50:4.2f}x"
    )


@asynccontextmanager
async def noop_stdio(*flags: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=sys.executable, args=[str(NOOP), *flags])
    async with Client(params) as client:
        yield client


@contextmanager
def noop_http() -> Any:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(NOOP), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_listening(port, process)
    try:
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        stop(process)


async def writes(db: Path, calls: int, size: int) -> None:
    async with (
        stdio_agent(db, "floor-stdio") as agent,
        noop_stdio() as noop,
        noop_stdio("--pipes") as piped,
    ):
        noop_times, write_times, piped_times = await alternate(
            calls,
            lambda i: noop.call_tool("noop", noop_args(i)),
            lambda i: agent.call("write_node", node("floor-stdio", i)),
            lambda i: piped.call_tool("noop", noop_args(i)),
        )
    report("stdio", size, noop_times, write_times)
    report_pipes(piped_times, write_times)
    token = create_token(Path(str(db) + ".tokens.json"), "floor-http", ("writer",))
    with http_server(db) as server, noop_http() as (url, _):
        async with http_agent(server.url, token) as agent, _client(url) as noop:
            noop_times, write_times = await alternate(
                calls,
                lambda i: noop.call_tool("noop", noop_args(i)),
                lambda i: agent.call("write_node", node("floor-http", i)),
            )
    report("HTTP", size, noop_times, write_times)


@asynccontextmanager
async def _client(url: str, token: str | None = None, mode: str = "auto") -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def sessions(name: str, url: str, pid: int, count: int, token: str | None) -> None:
    opened: list[float] = []
    marks = [f"{rss_mb(pid):.0f}"]
    for i in range(count):
        began = time.perf_counter()
        async with _client(url, token, mode="legacy"):
            opened.append(time.perf_counter() - began)
        if (i + 1) % max(1, count // 4) == 0:
            marks.append(f"{rss_mb(pid):.0f}")
    print(
        f"  {name:<10} open a session p50 {statistics.median(opened) * 1e3:6.1f} ms   "
        f"server RSS (MB) at 0 … {count:,} sessions: {' / '.join(marks)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "wg-bench-floor"
    )
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    print("one call to each server in turn, the same SDK client (Python) for both:")
    for size in (int(s) for s in args.sizes.split(",") if s):
        with tempfile.TemporaryDirectory(dir=args.cache) as folder:
            db = Path(folder) / "floor.db"
            shutil.copyfile(cached_nodes(args.cache, size), db)
            anyio.run(writes, db, args.calls, size)
    if args.sessions:
        print("HTTP sessions opened and closed one after another:")
        with tempfile.TemporaryDirectory() as folder:
            db = cached_nodes(Path(folder), 1000)
            token = create_token(Path(str(db) + ".tokens.json"), "sessions", ("reader",))
            with http_server(db) as server:
                anyio.run(
                    sessions, "writegate", server.url, server.process.pid, args.sessions, token
                )
            with noop_http() as (url, process):
                anyio.run(sessions, "no-op", url, process.pid, args.sessions, None)


if __name__ == "__main__":
    main()
