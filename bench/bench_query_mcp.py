"""graph_query and search_nodes over MCP against the protocol's floor, in one run: the same
questions asked in process, over stdio to ``writegate serve``, and the SDK's no-op server
called with the same arguments (one call to each in turn, the same SDK client), and the
no-op answering as many bytes of JSON as the tool's median answer. Prints p50 / p99 of each
and how far the MCP call is above the in-process call plus each no-op: what the transport
adds beyond the protocol's own cost, with a small answer and with one as large. Nothing
asserts.

The log is ``bench_query.py``'s (people who know two others and work for one of 200
organisations), built through the gate's batches.

usage: python bench/bench_query_mcp.py [--nodes 10000] [--calls 300] [--keep DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_mcp_floor import alternate, noop_stdio  # noqa: E402
from bench.bench_query import log_of, questions  # noqa: E402
from tests.server.harness import stdio_agent  # noqa: E402
from writegate.gate import Gate  # noqa: E402

TOOLS = {  # tool -> its arguments for a question (the no-op's noop_read takes the same)
    "graph_query": lambda q: {"query": q},
    "search_nodes": lambda q: {"query": q},
}


def _q(xs: list[float]) -> tuple[float, float]:
    cut = statistics.quantiles(xs, n=100, method="inclusive")
    return cut[49] * 1e3, cut[98] * 1e3


def in_process(db: Path, asked: list[str]) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Each tool's latencies in process, and the median size of its answers' JSON."""
    spent: dict[str, list[float]] = {tool: [] for tool in TOOLS}
    sizes: dict[str, int] = {}
    with Gate.open(db, readonly=True) as gate:
        reader = gate.reader()
        calls: dict[str, Callable[[str], BaseModel]] = {
            "graph_query": reader.graph_query,
            "search_nodes": reader.search_nodes,
        }
        for tool, call in calls.items():
            call(asked[0])
            for q in asked:
                began = time.perf_counter()
                call(q)
                spent[tool].append(time.perf_counter() - began)
            sizes[tool] = int(statistics.median(len(call(q).model_dump_json()) for q in asked))
    return spent, sizes


async def over_mcp(
    db: Path, asked: list[str], sizes: dict[str, int]
) -> dict[str, tuple[list[float], list[float], list[float]]]:
    """Per tool: the no-op's latencies, the same-size no-op's, and the tool's."""
    found: dict[str, tuple[list[float], list[float], list[float]]] = {}
    async with (
        stdio_agent(db, "bench-reader", roles=("reader",)) as agent,
        noop_stdio() as noop,
    ):
        for tool, arguments in TOOLS.items():

            async def ask(i: int, tool: str = tool, arguments: Any = arguments) -> Any:
                return await agent.call(tool, arguments(asked[i % len(asked)]))

            async def floor(i: int, arguments: Any = arguments) -> Any:
                return await noop.call_tool("noop_read", arguments(asked[i % len(asked)]))

            async def sized(i: int, size: int = sizes[tool]) -> Any:
                question = asked[i % len(asked)]
                return await noop.call_tool("noop_sized", {"query": question, "size": size})

            noop_times, sized_times, tool_times = await alternate(len(asked), floor, sized, ask)
            found[tool] = (noop_times, sized_times, tool_times)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--keep", type=Path, default=None, help="keep and reuse built logs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db = log_of(args.nodes, args.keep, Path(scratch))
        asked = questions(args.nodes, args.calls)
        local, sizes = in_process(db, asked)
        remote = anyio.run(over_mcp, db, asked, sizes)
    print(f"{args.nodes:,} people; p50 / p99 ms; the same {len(asked)} questions each way")
    print(
        f"{'tool':<14}{'answer':>9}{'in process':>16}{'no-op':>16}{'same-size no-op':>18}"
        f"{'over stdio':>16}{'over - both':>14}{'over - both (size)':>20}"
    )
    for tool in TOOLS:
        (i50, i99), (n50, n99), (s50, s99), (m50, m99) = (
            _q(local[tool]),
            *(_q(times) for times in remote[tool]),
        )
        print(
            f"{tool:<14}{f'{sizes[tool] / 1024:.1f} KiB':>9}{f'{i50:.2f} / {i99:.2f}':>16}"
            f"{f'{n50:.2f} / {n99:.2f}':>16}{f'{s50:.2f} / {s99:.2f}':>18}"
            f"{f'{m50:.2f} / {m99:.2f}':>16}{f'{(m50 - i50) / n50:.2f}x no-op':>14}"
            f"{f'{(m50 - i50) / s50:.2f}x sized':>20}"
        )


if __name__ == "__main__":
    main()
