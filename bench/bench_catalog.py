"""What an agent reads before its first call: the size of ``tools/list`` for a schema.

Connects the SDK's client to ``writegate serve`` (stdio, a writer) on a log holding the
example schema (``fixtures/schema.yaml``, 5 labels) and on the same schema grown to 20 and
50 labels (each added label like the example's: a described label with four properties,
an enum, a relationship property and a relationship type of its own), and prints, for
each ``--tools`` choice, the tools, the bytes of the ``tools/list`` result as JSON, what
each further label adds, and a token estimate (bytes / 4: the usual rule of thumb for
English and JSON with a BPE tokenizer; no tokenizer is downloaded) — beside the official
MCP memory server's nine tools (npm ``@modelcontextprotocol/server-memory``, pinned in
``tests/peers``), the baseline an agent compares against. Nothing asserts.

usage: python bench/bench_catalog.py [--sizes 5,20,50]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import yaml
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.server.grown_schema import grown  # noqa: E402
from tests.server.harness import stdio_agent  # noqa: E402
from writegate.gate import Gate  # noqa: E402

MEMORY_SERVER = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-server-memory"
CHOICES = ("generic", "labels", "all")


def size(tools: list[Any]) -> int:
    dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    return len(json.dumps({"tools": dumped}, separators=(",", ":")))


async def writegate(db: Path, choice: str) -> tuple[int, int]:
    async with stdio_agent(db, extra=("--tools", choice)) as agent:
        listed = await agent.client.list_tools()
    return len(listed.tools), size(listed.tools)


async def memory_server(scratch: Path) -> tuple[int, int] | None:
    if not MEMORY_SERVER.exists():
        return None
    env = {**os.environ, "MEMORY_FILE_PATH": str(scratch / "memory.jsonl")}
    async with Client(StdioServerParameters(command=str(MEMORY_SERVER), env=env)) as client:
        listed = await client.list_tools()
    return len(listed.tools), size(listed.tools)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,20,50", help="label counts (the first: 5)")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        measured: dict[tuple[str, int], tuple[int, int]] = {}
        for labels in sizes:
            schema = scratch / f"schema-{labels}.yaml"
            schema.write_text(yaml.safe_dump(grown(labels), sort_keys=False))
            db = scratch / f"catalog-{labels}.db"
            with Gate.open(db) as gate:
                gate.publish_schema(schema)
            for choice in CHOICES:
                measured[choice, labels] = await writegate(db, choice)
        baseline = await memory_server(scratch)
    print("tools/list a writer reads (stdio; bytes of the result as compact JSON):")
    print(
        f"  {'catalogue':<28} {'labels':>6} {'tools':>6} {'bytes':>9} {'~tokens':>8} {'a label':>8}"
    )
    for choice in CHOICES:
        first = measured[choice, sizes[0]][1]
        for labels in sizes:
            tools, total = measured[choice, labels]
            each = (total - first) / (labels - sizes[0]) if labels != sizes[0] else 0
            added = f"{each:>8,.0f}" if labels != sizes[0] else f"{'':>8}"
            name = f"writegate --tools {choice}"
            print(f"  {name:<28} {labels:>6} {tools:>6} {total:>9,} {total // 4:>8,} {added}")
    if baseline is None:
        print("  MCP memory server: not installed (make bench runs npm ci in tests/peers)")
    else:
        tools, total = baseline
        name = "MCP memory server"
        print(f"  {name:<28} {'-':>6} {tools:>6} {total:>9,} {total // 4:>8,}")


if __name__ == "__main__":
    anyio.run(main)
