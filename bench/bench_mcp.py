"""write_node through MCP, against the official MCP memory server, with the same SDK client.

For each graph size (default 1k and 10k entities) prints calls/s, p50 and p99 of:
  * the official memory server (npm @modelcontextprotocol/server-memory, pinned in
    tests/peers), one ``create_entities`` call per entity, over stdio;
  * writegate ``write_node`` over stdio (``writegate serve``);
  * writegate ``write_node`` over Streamable HTTP with a bearer token.
Graphs are pre-filled before timing (the memory server through its own tool, 1,000
entities per call; writegate through ``Gate.write_batch``). Nothing asserts.

usage: python bench/bench_mcp.py [--sizes 1000,10000] [--calls 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import plain_example  # noqa: E402
from tests.server.harness import (  # noqa: E402
    http_agent,
    http_server,
    stdio_agent,
)
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.gate.server.tokens import create_token  # noqa: E402

MEMORY_SERVER = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-server-memory"
SCHEMA = plain_example()  # synthetic look-alike names: the plain write path
PROVENANCE = {"source": "bench", "extraction_method": "api", "reliability": 0.9}


def summary(name: str, size: int, latencies: list[float], elapsed: float) -> str:
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    return (
        f"  {name:<28} graph {size:>6,}: {len(latencies) / elapsed:>7,.0f} calls/s"
        f"   p50 {q[49] * 1e3:7.2f} ms   p99 {q[98] * 1e3:7.2f} ms"
    )


async def timed(calls: int, call: Callable[[int], Awaitable[Any]]) -> tuple[list[float], float]:
    for i in range(10):  # warm-up, not timed
        await call(-1 - i)
    latencies = []
    started = time.perf_counter()
    for i in range(calls):
        t = time.perf_counter()
        await call(i)
        latencies.append(time.perf_counter() - t)
    return latencies, time.perf_counter() - started


async def memory_server(size: int, calls: int, tmp: Path) -> str:
    latencies, elapsed = await memory_server_timed(size, calls, tmp)
    return summary("memory server (stdio)", size, latencies, elapsed)


async def memory_server_timed(size: int, calls: int, tmp: Path) -> tuple[list[float], float]:
    """``create_entities`` calls, one new entity each, on a graph pre-filled to ``size``."""
    params = StdioServerParameters(
        command=str(MEMORY_SERVER),
        env={**os.environ, "MEMORY_FILE_PATH": str(tmp / f"memory-{size}.jsonl")},
    )
    async with Client(params) as client:
        for start in range(0, size, 1000):
            entities = [
                {"name": f"pre-{i}", "entityType": "person", "observations": ["age 42"]}
                for i in range(start, min(size, start + 1000))
            ]
            await client.call_tool("create_entities", {"entities": entities})

        async def one(i: int) -> None:
            entity = {"name": f"new-{i}", "entityType": "person", "observations": ["age 42"]}
            result = await client.call_tool("create_entities", {"entities": [entity]})
            assert not result.is_error, result

        return await timed(calls, one)


def writegate_db(size: int, tmp: Path) -> Path:
    db = tmp / f"writegate-{size}.db"
    with Gate.open(db, default_actor=Actor(agent="bench-loader")) as gate:
        gate.publish_schema(SCHEMA)
        for start in range(0, size, 1000):
            items = [
                {
                    "op": "write_node",
                    "label": "Person",
                    "merge_keys": {"name": f"pre-{i}"},
                    "properties": {"age": 42},
                    **PROVENANCE,
                }
                for i in range(start, min(size, start + 1000))
            ]
            assert gate.write_batch(items=items).status == "written"
    return db


def node(prefix: str, i: int) -> dict[str, Any]:
    return {
        "label": "Person",
        "merge_keys": {"name": f"{prefix}-{i}"},
        "properties": {"age": 42},
        **PROVENANCE,
    }


async def writegate_stdio(db: Path, size: int, calls: int) -> str:
    async with stdio_agent(db, "bench-stdio") as agent:

        async def one(i: int) -> None:
            assert not (await agent.call("write_node", node("stdio", i))).is_error

        latencies, elapsed = await timed(calls, one)
    return summary("writegate write_node (stdio)", size, latencies, elapsed)


async def writegate_http(db: Path, size: int, calls: int) -> str:
    token = create_token(Path(str(db) + ".tokens.json"), "bench-http", ("writer",))
    with http_server(db) as server:
        async with http_agent(server.url, token) as agent:

            async def one(i: int) -> None:
                assert not (await agent.call("write_node", node("http", i))).is_error

            latencies, elapsed = await timed(calls, one)
    return summary("writegate write_node (HTTP)", size, latencies, elapsed)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    if not MEMORY_SERVER.exists():
        sys.exit(
            "error: the memory server is not installed; run `make bench` (npm ci in tests/peers)"
        )
    print("MCP write benchmark (same Python SDK client for every server; one entity per call)")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for size in (int(s) for s in args.sizes.split(",")):
            print(await memory_server(size, args.calls, tmp))
            db = writegate_db(size, tmp)
            print(await writegate_stdio(db, size, args.calls))
            print(await writegate_http(db, size, args.calls))


if __name__ == "__main__":
    anyio.run(main)
