"""Seed 001 §14.2 and §14.3 through the per-type tools and the neighbour-inclusive reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import EXAMPLE_SCHEMA, FIXTURES
from tests.server.conftest import ALL_TOOLS, published
from tests.server.harness import Agent, Served, stdio_agent
from writegate.gate import Gate
from writegate.language import node_identity
from writegate.projections.state.scoping import scope_of

pytestmark = pytest.mark.anyio

PROVENANCE = {"source": "campaign-notes.md", "extraction_method": "manual", "reliability": 0.9}


def npc(**entity: Any) -> dict[str, Any]:
    return {"npc": entity, **PROVENANCE}


def names(subgraph: dict[str, Any]) -> list[str]:
    return sorted(n["merge_keys"]["name"] for n in subgraph["nodes"])


def edges(subgraph: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted(
        (e["from"]["merge_keys"]["name"], e["type"], e["to"]["merge_keys"]["name"])
        for e in subgraph["edges"]
    )


async def located(agent: Agent, name: str) -> list[tuple[str, str, str]]:
    out = await agent.call(
        "open_nodes", {"nodes": [{"label": "Npc", "merge_keys": {"name": name}}]}
    )
    return [e for e in edges(out.data) if e[1] == "LOCATED_IN"]


async def test_tools_are_generated_per_label(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        listed = await agent.client.list_tools()
    tools = {t.name: t for t in listed.tools}
    for label in ("npc", "location"):
        assert {f"add_{label}", f"update_{label}", f"delete_{label}"} <= set(tools)
    add_schema = tools["add_npc"].input_schema
    entity = add_schema["properties"]["npc"]
    assert add_schema["required"] == ["npc", "source", "extraction_method"]
    assert entity["required"] == ["name", "role", "status"]
    assert entity["properties"]["role"]["enum"] == [
        "Warrior",
        "Wizard",
        "Merchant",
        "Noble",
        "Peasant",
        "Thief",
    ]
    assert entity["properties"]["traits"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Character traits",
    }
    assert tools["update_npc"].input_schema["properties"]["npc"]["required"] == ["name"]
    delete_entity = tools["delete_npc"].input_schema["properties"]["npc"]
    assert list(delete_entity["properties"]) == ["name"]


async def test_create_node_via_schema_tool(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        out = await agent.call("add_npc", npc(name="Gandalf", role="Wizard", status="Active"))
        assert not out.is_error, out.data
        opened = await agent.call(
            "open_nodes", {"nodes": [{"label": "Npc", "merge_keys": {"name": "Gandalf"}}]}
        )
    [gandalf] = opened.data["nodes"]
    assert gandalf["properties"] == {"name": "Gandalf", "role": "Wizard", "status": "Active"}
    assert gandalf["provenance"]["source"] == "campaign-notes.md"
    assert gandalf["provenance"]["confidence"] == pytest.approx(0.9 * 0.75)


async def test_create_node_with_relationship_property(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        out = await agent.call(
            "add_npc",
            npc(name="Gandalf", role="Wizard", status="Active", currentLocation="Rivendell"),
        )
        assert not out.is_error, out.data
        assert [r["status"] for r in out.data["results"]] == ["written", "written"]
        assert await located(agent, "Gandalf") == [("Gandalf", "LOCATED_IN", "Rivendell")]


async def test_update_node_moves_the_relationship(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        await agent.call(
            "add_npc",
            npc(name="Gandalf", role="Wizard", status="Active", currentLocation="Rivendell"),
        )
        out = await agent.call("update_npc", npc(name="Gandalf", currentLocation="Mordor"))
        assert not out.is_error, out.data
        assert await located(agent, "Gandalf") == [("Gandalf", "LOCATED_IN", "Mordor")]
        opened = await agent.call(
            "open_nodes", {"nodes": [{"label": "Npc", "merge_keys": {"name": "Gandalf"}}]}
        )
    gandalf = next(n for n in opened.data["nodes"] if n["label"] == "Npc")
    assert gandalf["properties"]["currentLocation"] == "Mordor"
    assert gandalf["properties"]["role"] == "Wizard"  # untouched by the partial update


async def test_update_of_a_missing_node_is_rejected(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        out = await agent.call("update_npc", npc(name="Nobody", status="Missing"))
    assert out.is_error
    assert out.data["error_code"] == "NODE_NOT_FOUND"


async def test_delete_node_via_schema_tool_removes_its_edges(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        await agent.call(
            "add_npc",
            npc(name="Gandalf", role="Wizard", status="Active", currentLocation="Rivendell"),
        )
        out = await agent.call("delete_npc", npc(name="Gandalf"))
        assert not out.is_error, out.data
        assert out.data["relationships_deleted"] == 1
        gone = await agent.call(
            "open_nodes", {"nodes": [{"label": "Npc", "merge_keys": {"name": "Gandalf"}}]}
        )
        assert gone.data["nodes"] == []
        assert gone.data["edges"] == []
        history = await agent.call(
            "node_history", {"node": {"label": "Npc", "merge_keys": {"name": "Gandalf"}}}
        )
    # deleted, not erased: the trail still shows who created and who deleted it
    assert [e["type"] for e in history.data["entries"]] == ["node.written", "node.deleted"]


async def test_enum_validation(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        out = await agent.call("add_npc", npc(name="Smaug", role="Dragon", status="Active"))
    assert out.is_error
    assert out.data["error_code"] == "SCHEMA_ENUM_VIOLATION"


async def test_search_returns_neighbours(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        for name in ("A", "B", "C"):
            await agent.call(
                "write_node", {"label": "Location", "merge_keys": {"name": name}, **PROVENANCE}
            )
        await agent.call(
            "write_node",
            {
                "label": "Location",
                "merge_keys": {"name": "A"},
                "properties": {"region": "Shire"},
                **PROVENANCE,
            },
        )
        await agent.call(
            "write_relationship",
            {
                "type": "ROAD_TO",
                "from_label": "Location",
                "from_keys": {"name": "A"},
                "to_label": "Location",
                "to_keys": {"name": "B"},
                **PROVENANCE,
            },
        )
        out = await agent.call("search_nodes", {"query": "shire"})
    assert names(out.data) == ["A", "B"]
    assert edges(out.data) == [("A", "ROAD_TO", "B")]


async def test_open_nodes_returns_neighbours(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        for name in ("A", "B", "C"):
            await agent.call(
                "write_node", {"label": "Location", "merge_keys": {"name": name}, **PROVENANCE}
            )
        for start, end in (("A", "B"), ("B", "C")):
            await agent.call(
                "write_relationship",
                {
                    "type": "ROAD_TO",
                    "from_label": "Location",
                    "from_keys": {"name": start},
                    "to_label": "Location",
                    "to_keys": {"name": end},
                    **PROVENANCE,
                },
            )
        out = await agent.call(
            "open_nodes", {"nodes": [{"label": "Location", "merge_keys": {"name": "A"}}]}
        )
        path = await agent.call(
            "find_path",
            {
                "from": {"label": "Location", "merge_keys": {"name": "A"}},
                "to": {"label": "Location", "merge_keys": {"name": "C"}},
            },
        )
        around = await agent.call(
            "neighbors",
            {"node": {"label": "Location", "merge_keys": {"name": "A"}}, "depth": 2},
        )
    assert names(out.data) == ["A", "B"]
    assert edges(out.data) == [("A", "ROAD_TO", "B")]
    assert path.data["found"] is True
    assert path.data["length"] == 2
    assert [n["merge_keys"]["name"] for n in path.data["nodes"]] == ["A", "B", "C"]
    assert names(around.data) == ["A", "B", "C"]
    assert len(around.data["edges"]) == 2


async def test_add_over_a_merged_away_name_names_the_node_it_meets(served_npc: Served) -> None:
    async with served_npc.agent() as agent:
        for name in ("Gandalf", "Gandalf the Grey"):
            out = await agent.call("add_npc", npc(name=name, role="Wizard", status="Active"))
            assert not out.is_error, out.data
    merge = {"label": "Npc", "survivor_keys": {"name": "Gandalf"},
             "duplicate_keys": {"name": "Gandalf the Grey"}, "reason": "one wizard",
             "source": "review", "extraction_method": "manual"}  # fmt: skip
    async with served_npc.agent("rev-1", roles=("reviewer",)) as reviewer:
        merged = await reviewer.call("merge_nodes", merge)
        assert not merged.is_error, merged.data
    async with served_npc.agent() as agent:
        again = await agent.call(
            "add_npc", npc(name="Gandalf the Grey", role="Wizard", status="Missing")
        )
    assert again.data["error_code"] == "NODE_ALREADY_EXISTS"
    assert again.data["message"].startswith('Npc{"name":"Gandalf"} already exists')
    assert 'Npc{"name":"Gandalf the Grey"} already exists' not in again.data["message"]
    assert "update_npc" in again.data["message"]


async def test_a_write_of_edges_sent_again_with_its_key_lands_once(served_npc: Served) -> None:
    """An update (``update_npc``, or ``write_node`` of a relationship property) bound its key
    to the batch it made from the graph: a retry read the version and the edges its first
    try had moved, made another batch, and was refused ``IDEMPOTENCY_KEY_REUSED``."""
    gandalf = npc(name="Gandalf", role="Wizard", status="Active", currentLocation="Rivendell")
    moved = {**npc(name="Gandalf", currentLocation="Mordor"), "idempotency_key": "move-1"}
    generic = {"label": "Npc", "merge_keys": {"name": "Gandalf"},
               "properties": {"currentLocation": "Shire"}, **PROVENANCE, "idempotency_key": "move-2"}  # fmt: skip
    async with served_npc.agent() as agent:
        assert not (await agent.call("add_npc", gandalf)).is_error
        first, again = [await agent.call("update_npc", moved) for _ in range(2)]
        first_generic, again_generic = [await agent.call("write_node", generic) for _ in range(2)]
        other = await agent.call(
            "update_npc", {**moved, "npc": {"name": "Gandalf", "status": "Missing"}}
        )
        now = await located(agent, "Gandalf")
    assert not first.is_error, first.data
    assert again.data == first.data
    assert not first_generic.is_error, first_generic.data
    assert again_generic.data == first_generic.data
    assert now == [("Gandalf", "LOCATED_IN", "Shire")]  # each retry wrote nothing again
    assert other.data["error_code"] == "IDEMPOTENCY_KEY_REUSED"  # another write, the same key


async def test_a_property_named_title_is_in_its_tool_s_published_arguments(
    tmp_path: Path,
) -> None:
    """The catalogue dropped JSON Schema's ``title`` keyword everywhere, a property of that
    name too: ``add_document`` required ``title`` and forbade it, so a client validating
    its arguments against the published ``inputSchema`` could never call it."""
    db = published(tmp_path / "docs.db", EXAMPLE_SCHEMA)
    call = {"document": {"uri": "u:1", "title": "Hello"}, **PROVENANCE}
    async with stdio_agent(db, extra=ALL_TOOLS) as agent:
        tools = {t.name: t for t in (await agent.client.list_tools()).tools}
        out = await agent.call("add_document", call)
    document = tools["add_document"].input_schema["properties"]["document"]
    assert document["properties"]["title"]["type"] == "string"
    jsonschema.validate(call, tools["add_document"].input_schema)
    assert not out.is_error, out.data


async def test_a_label_kept_in_several_scopes_lets_its_tools_choose_one(tmp_path: Path) -> None:
    """``add_ticket`` had no ``scope``: a writer granted only the label's second scope
    could not add a ticket through it (the first was chosen, outside its grant)."""
    db = published(tmp_path / "team.db", FIXTURES / "scoped_schema.yaml")
    ticket = {"ticket": {"name": "T-9"}, **PROVENANCE}
    async with stdio_agent(db, extra=(*ALL_TOOLS, "--scope", "eng")) as agent:
        tools = {t.name: t for t in (await agent.client.list_tools()).tools}
        first = await agent.call("add_ticket", ticket)
        added = await agent.call("add_ticket", {**ticket, "scope": "eng"})
        elsewhere = await agent.call("add_ticket", {**ticket, "scope": "hr"})
    assert tools["add_ticket"].input_schema["properties"]["scope"]["enum"] == ["ops", "eng"]
    assert "scope" not in tools["delete_ticket"].input_schema["properties"]
    assert first.data["error_code"] == "POLICY_DENIED"  # ops, the label's first
    assert not added.is_error, added.data
    assert elsewhere.data["error_code"] == "POLICY_DENIED"  # outside the grant, first
    with Gate.open(db) as gate:
        assert scope_of(gate.log.connection(), node_identity("Ticket", {"name": "T-9"})) == "eng"
