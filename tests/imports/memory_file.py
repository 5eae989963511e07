"""Make a real MCP memory-server file: drive the official server (npm
``@modelcontextprotocol/server-memory``, pinned in tests/peers) with the Python SDK client.

usage: python -m tests.imports.memory_file OUT.jsonl   (fixtures/mcp-memory.jsonl was made so)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
MEMORY_SERVER = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-server-memory"

ENTITIES = [
    {
        "name": "Ada Lovelace",
        "entityType": "person",
        "observations": ["role: engineer", "Wrote the first published algorithm", "age: 36"],
    },
    {
        "name": "Charles Babbage",
        "entityType": "Person",
        "observations": ["Designed the Analytical Engine", "email: cb@example.org"],
    },
    {
        "name": "Analytical Engines Ltd",
        "entityType": "company",
        "observations": ["kind: company", "founded: 1834"],
    },
    {
        "name": "difference-engine",
        "entityType": "service",
        "observations": ["language: brass"],
    },  # a Service needs a tier: the gate refuses it
    {
        "name": "Jacquard loom",
        "entityType": "machine",
        "observations": ["Punched cards control the weave"],
    },
]
RELATIONS = [
    {"from": "Ada Lovelace", "to": "Analytical Engines Ltd", "relationType": "works at"},
    {"from": "Charles Babbage", "to": "Analytical Engines Ltd", "relationType": "works_for"},
    {"from": "Ada Lovelace", "to": "Charles Babbage", "relationType": "knows"},
    {"from": "Ada Lovelace", "to": "Jacquard loom", "relationType": "inspired by"},
]


async def generate(out: Path) -> None:
    assert MEMORY_SERVER.exists(), "install tests/peers first (make test does: npm ci)"
    out = out.resolve()  # the server resolves a relative path against its own folder
    out.unlink(missing_ok=True)
    params = StdioServerParameters(
        command=str(MEMORY_SERVER), env={**os.environ, "MEMORY_FILE_PATH": str(out)}
    )
    async with Client(params) as client:
        for tool, arguments in (
            ("create_entities", {"entities": ENTITIES}),
            ("create_relations", {"relations": RELATIONS}),
            (
                "add_observations",
                {"observations": [{"entityName": "Charles Babbage", "contents": ["age: 79"]}]},
            ),
        ):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result


if __name__ == "__main__":
    anyio.run(generate, Path(sys.argv[1]))
