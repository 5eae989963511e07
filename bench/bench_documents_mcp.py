"""graph_query beside search_observations over MCP, on a memory of long texts: the first
call of a fresh server and the calls after it, one run. Nothing asserts.

The texts are Debian's own changelogs, as this machine holds them (``/usr/share/doc/*/
changelog*.gz``: each package's maintainers' notes, under its package's licence; read, never
shipped): the ``--documents`` largest, each cut to ``--cap`` bytes, recorded in process as one
observation each (a document of passages). Questions are words of the texts themselves: a
line of a randomly chosen document, four of its words (seeded, so each run asks the same).

For each tool, a fresh ``writegate serve`` over stdio (the console script, as an agent's
client starts it) is asked one question: its first call, a server's imports and caches
included, timed from the client. Then one server answers ``--calls`` questions, each asked
of both tools in turn: p50 / p99 of each, and graph_query's over search_observations'.

usage: python bench/bench_documents_mcp.py [--documents 200] [--cap 262144] [--calls 300]
"""

from __future__ import annotations

import argparse
import glob
import gzip
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import EXAMPLE_SCHEMA  # noqa: E402
from tests.server.harness import Agent, stdio_agent  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.eventlog.bulk import bulk  # noqa: E402
from writegate.gate import Gate  # noqa: E402

CHANGELOGS = "/usr/share/doc/*/changelog*.gz"
TOOLS = ("graph_query", "search_observations")
WORD = re.compile(r"[A-Za-z]{4,}")


def texts(count: int, cap: int) -> list[tuple[str, str]]:
    """The ``count`` largest changelogs, (package, text), each at most ``cap`` bytes."""
    found = []
    for path in glob.glob(CHANGELOGS):
        with gzip.open(path) as packed:
            raw = packed.read()[:cap]
        found.append((len(raw), Path(path).parent.name, raw.decode("utf-8", "replace")))
    found.sort(reverse=True)
    return [(name, text) for _, name, text in found[:count]]


def questions(documents: list[tuple[str, str]], count: int) -> list[str]:
    """Four words of a line of a document, for ``count`` documents drawn at random."""
    rng, asked = random.Random(7), list[str]()
    while len(asked) < count:
        _, text = rng.choice(documents)
        lines = text.splitlines()
        words = WORD.findall(lines[rng.randrange(len(lines))])
        if len(words) >= 4:
            start = rng.randrange(len(words) - 3)
            asked.append(" ".join(words[start : start + 4]))
    return asked


def record(db: Path, documents: list[tuple[str, str]]) -> int:
    with bulk(), Gate.open(db, default_actor=Actor(agent="bench-docs")) as gate:
        assert gate.publish_schema(EXAMPLE_SCHEMA).status == "published"
        for name, text in documents:
            kept = gate.record_observation(
                text=text, source=f"debian:{name}", extraction_method="parsed"
            )
            assert kept.status == "recorded", kept
        return gate.log.head()[0]


async def ask(agent: Agent, tool: str, question: str) -> float:
    began = time.perf_counter()
    answer = await agent.call(tool, {"query": question})
    elapsed = time.perf_counter() - began
    assert not answer.is_error, answer.data
    return elapsed


async def first_calls(db: Path, question: str) -> dict[str, float]:
    firsts = {}
    for tool in TOOLS:
        async with stdio_agent(db, "bench-reader", roles=("reader",)) as agent:
            firsts[tool] = await ask(agent, tool, question)
    return firsts


async def steady(db: Path, asked: list[str]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {tool: [] for tool in TOOLS}
    async with stdio_agent(db, "bench-reader", roles=("reader",)) as agent:
        for question in asked[:10]:  # warm-up, not timed
            for tool in TOOLS:
                await ask(agent, tool, question)
        for question in asked[10:]:
            for tool in TOOLS:
                times[tool].append(await ask(agent, tool, question))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--cap", type=int, default=256 * 1024, help="bytes of each text")
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    documents = texts(args.documents, args.cap)
    if not documents:
        sys.exit(f"no changelogs at {CHANGELOGS}")
    size = sum(len(text.encode()) for _, text in documents)
    asked = questions(documents, args.calls + 11)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "documents.db"
        events = record(db, documents)
        print(
            f"{len(documents)} changelogs, {size / 1e6:.1f} MB ({size // len(documents):,} bytes "
            f"each on average), recorded as {events:,} events; {args.calls} questions of 4 words"
        )
        firsts = anyio.run(first_calls, db, asked[-1])
        times = anyio.run(steady, db, asked[:-1])
    base = statistics.median(times["search_observations"])
    print(f"  {'tool':<20} {'first call':>10} {'p50':>8} {'p99':>8}  p50 over search_observations")
    for tool in TOOLS:
        cut = statistics.quantiles(times[tool], n=100, method="inclusive")
        print(
            f"  {tool:<20} {firsts[tool] * 1e3:7.1f} ms {cut[49] * 1e3:5.1f} ms "
            f"{cut[98] * 1e3:5.1f} ms  {cut[49] / base:4.2f}x"
        )
    ratio = firsts["graph_query"] / firsts["search_observations"]
    print(f"  first calls: graph_query's over search_observations' {ratio:4.2f}x")


if __name__ == "__main__":
    main()
