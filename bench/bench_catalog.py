"""What an agent reads before its first call: the size of ``tools/list`` for a schema.

Connects the SDK's client to ``writegate serve`` (stdio) on a log holding the example
schema (``fixtures/schema.yaml``) and prints, for each ``--tools`` choice, the number of
tools, the bytes of the ``tools/list`` result as JSON, how many of them are output
schemas, and a token estimate (bytes / 4: the usual rule of thumb for English and JSON
with a BPE tokenizer; no tokenizer is downloaded). Nothing asserts.

usage: python bench/bench_catalog.py [--schema FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.server.harness import stdio_agent  # noqa: E402
from writegate.gate import Gate  # noqa: E402


async def measure(db: Path, choice: str) -> str:
    async with stdio_agent(db, extra=("--tools", choice)) as agent:
        listed = await agent.client.list_tools()
    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
    total = len(json.dumps({"tools": tools}, separators=(",", ":")))
    outputs = sum(len(json.dumps(t.get("outputSchema", {}), separators=(",", ":"))) for t in tools)
    return (
        f"  --tools {choice:<8} {len(tools):>3} tools  {total:>8,} bytes  "
        f"(output schemas {outputs:>7,})  ~{total // 4:>6,} tokens"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", type=Path, default=ROOT / "fixtures" / "schema.yaml")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "catalog.db"
        with Gate.open(db) as gate:
            gate.publish_schema(options.schema)
        print(f"tools/list for {options.schema.name}:")
        for choice in ("all", "generic", "labels"):
            print(await measure(db, choice))


if __name__ == "__main__":
    anyio.run(main)
