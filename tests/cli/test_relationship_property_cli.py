"""``writegate write node`` makes the edge a relationship property declares, as the per-label
MCP tool does (issue 42, defect 8): the same schema, the same write from either face, the
same events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import as_json, writegate
from tests.conftest import EXAMPLE_SCHEMA
from tests.server.harness import stdio_agent
from writegate.gate import Gate

pytestmark = pytest.mark.anyio

PROV = {"source": "cmdb.csv", "extraction_method": "manual", "reliability": 0.9}
CLI_PROV = ("--source", "cmdb.csv", "--method", "manual", "--reliability", "0.9")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def said(db: Path) -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
    """What each event after the schema says: its type, payload and provenance."""
    with Gate.open(db) as gate:
        events = list(gate.log.iter_events())
    return [(e.type, e.payload, e.provenance) for e in events if e.type != "schema.published"]


def owned_by(db: Path) -> list[tuple[str, str, str]]:
    opened = as_json(db, "open", "Service:name=billing", "--format", "json")
    return sorted(
        (e["from"]["merge_keys"]["name"], e["type"], e["to"]["merge_keys"]["name"])
        for e in opened["edges"]
        if e["type"] == "OWNED_BY"
    )


async def test_write_node_makes_the_edge_add_service_makes(tmp_path: Path) -> None:
    over_mcp, from_cli = tmp_path / "mcp.db", tmp_path / "cli.db"
    for db in (over_mcp, from_cli):
        writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    async with stdio_agent(over_mcp, extra=("--tools", "all")) as agent:  # add_service
        out = await agent.call(
            "add_service", {"service": {"name": "billing", "tier": 1, "owner": "Initech"}, **PROV}
        )
        assert not out.is_error, out.data
    wrote = writegate(
        from_cli, "write", "node", "Service:name=billing", "-p", "tier=1", "-p", "owner=Initech",
        *CLI_PROV,
    )  # fmt: skip
    assert "1 node write, 1 relationship write" in wrote.stdout, wrote.stdout
    assert owned_by(from_cli) == owned_by(over_mcp) == [("billing", "OWNED_BY", "Initech")]
    cli_events = said(from_cli)
    assert [t for t, _, _ in cli_events] == ["node.written", "relationship.written"]
    assert cli_events == said(over_mcp)


def test_writing_it_again_moves_the_edge(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    node = ("write", "node", "Service:name=billing", "-p", "tier=1")
    writegate(db, *node, "-p", "owner=Initech", *CLI_PROV)
    writegate(db, *node, "-p", "owner=Globex", *CLI_PROV)
    assert owned_by(db) == [("billing", "OWNED_BY", "Globex")]


async def test_the_generic_write_node_tool_makes_the_same_edge(tmp_path: Path) -> None:
    """The default catalogue is the generic tools (issue 41): its write_node makes the edge a
    relationship property declares as add_service and write node do, the same events."""
    generic, per_label = tmp_path / "generic.db", tmp_path / "label.db"
    for db in (generic, per_label):
        writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    node = {"label": "Service", "merge_keys": {"name": "billing"}}
    async with stdio_agent(generic) as agent:
        first = await agent.call(
            "write_node", {**node, "properties": {"tier": 1, "owner": "Initech"}, **PROV}
        )
        assert not first.is_error, first.data
        assert first.data["status"] == "written", first.data
        moved = await agent.call("write_node", {**node, "properties": {"owner": "Globex"}, **PROV})
        assert not moved.is_error, moved.data
    async with stdio_agent(per_label, extra=("--tools", "all")) as agent:
        await agent.call(
            "add_service", {"service": {"name": "billing", "tier": 1, "owner": "Initech"}, **PROV}
        )
        await agent.call(
            "update_service", {"service": {"name": "billing", "owner": "Globex"}, **PROV}
        )
    assert owned_by(generic) == owned_by(per_label) == [("billing", "OWNED_BY", "Globex")]
    assert said(generic) == said(per_label)


def test_moving_an_edge_again_with_its_key_writes_nothing_again(tmp_path: Path) -> None:
    """The key was bound to the batch the write made, and a retry (after its first try had
    moved the edge) made another: refused ``IDEMPOTENCY_KEY_REUSED``."""
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    billing = ("write", "node", "Service:name=billing", "-p", "tier=1", *CLI_PROV)
    writegate(db, *billing, "-p", "owner=Initech")
    moved = (*billing, "-p", "owner=Globex", "--idempotency-key", "move-1", "--format", "json")
    first, again = (json.loads(writegate(db, *moved).stdout) for _ in range(2))
    assert again == first
    assert owned_by(db) == [("billing", "OWNED_BY", "Globex")]
