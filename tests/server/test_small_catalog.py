"""What an agent pays before its first call (issue 41, finding 1): the default catalogue is
the generic tools, small and flat in the schema's size, naming the schema's vocabulary;
a label's detail comes from ``get_schema`` on request; and an agent can still do through
it everything the per-label tools did. Measured over the SDK client, as an agent reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.conftest import EXAMPLE_SCHEMA, FIXTURES
from tests.server.conftest import published
from tests.server.grown_schema import grown
from tests.server.harness import Agent, stdio_agent

pytestmark = pytest.mark.anyio

BUDGET = 16_000  # bytes of tools/list for a writer on the example schema
PER_LABEL = 400  # bytes a further label may add
PROV = {"source": "crm.csv", "extraction_method": "parsed", "reliability": 0.9}


async def listed(agent: Agent) -> list[dict[str, Any]]:
    tools = (await agent.client.list_tools()).tools
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def size(tools: list[dict[str, Any]]) -> int:
    return len(json.dumps({"tools": tools}, separators=(",", ":")))


def schema_of(tmp_path: Path, labels: int) -> Path:
    path = tmp_path / f"schema-{labels}.yaml"
    path.write_text(yaml.safe_dump(grown(labels), sort_keys=False))
    return path


async def test_the_default_catalogue_fits_its_budget_and_a_label_adds_little(
    tmp_path: Path,
) -> None:
    sizes = {}
    for labels in (5, 20):
        db = published(tmp_path / f"log-{labels}.db", schema_of(tmp_path, labels))
        async with stdio_agent(db) as agent:
            tools = await listed(agent)
        assert not [t["name"] for t in tools if t["name"].startswith(("add_", "update_"))]
        sizes[labels] = size(tools)
    assert sizes[5] <= BUDGET, sizes
    assert (sizes[20] - sizes[5]) / 15 <= PER_LABEL, sizes


async def test_the_generic_tools_name_the_schema_s_labels_types_and_methods(
    db_path: Path,
) -> None:
    async with stdio_agent(published(db_path, EXAMPLE_SCHEMA)) as agent:
        tools = {t["name"]: t for t in await listed(agent)}
    node = tools["write_node"]["inputSchema"]["properties"]
    for label in ("Person", "Organization", "Service", "Document", "Entity"):
        assert label in node["label"]["description"]
    edge = tools["write_relationship"]["inputSchema"]["properties"]
    for rtype in ("WORKS_FOR", "OWNED_BY", "DEPENDS_ON", "KNOWS"):
        assert rtype in edge["type"]["description"]
    assert node["extraction_method"]["enum"] == ["api", "llm", "manual", "parsed"]
    assert "enum" not in node["label"]  # a synonym (Company, App) is a value too
    assert "outputSchema" not in tools["write_node"]


async def test_get_schema_gives_one_label_s_detail_on_request(db_path: Path) -> None:
    async with stdio_agent(published(db_path, EXAMPLE_SCHEMA)) as agent:
        one = await agent.call("get_schema", {"labels": ["App"]})  # a synonym of Service
        every = await agent.call("get_schema", {})
        unknown = await agent.call("get_schema", {"labels": ["Starship"]})
    document = one.data["document"]
    assert list(document["nodes"]) == ["Service"]
    service = document["nodes"]["Service"]
    assert service["properties"]["tier"]["enum"] == [0, 1, 2, 3]
    assert service["properties"]["owner"]["relationship"]["type"] == "OWNED_BY"
    assert set(document["relationships"]) == {"OWNED_BY", "DEPENDS_ON", "MENTIONS", "RELATED_TO"}
    assert len(every.data["document"]["nodes"]) == 5
    assert unknown.is_error
    assert unknown.data["error_code"] == "SCHEMA_UNKNOWN_LABEL"
    assert "Service" in unknown.data["message"]


async def test_get_schema_says_where_a_label_s_nodes_are_kept(db_path: Path) -> None:
    """A writer learned a label's scopes only from a refusal: the schema it was shown said
    nothing of them, the resource neither."""
    scoped = published(db_path, FIXTURES / "scoped_schema.yaml")
    async with stdio_agent(scoped, extra=("--scope", "ops")) as agent:
        shown = await agent.call("get_schema", {"labels": ["Ticket", "Employee"]})
        resource = await agent.client.read_resource("writegate://schema")
    nodes = shown.data["document"]["nodes"]
    assert (nodes["Ticket"]["scopes"], nodes["Employee"]["scope"]) == (["ops", "eng"], "hr")
    assert "scope" not in nodes["Ticket"]
    assert "scopes" not in nodes["Employee"]
    [text] = resource.contents
    assert json.loads(getattr(text, "text", ""))["document"]["nodes"]["Employee"]["scope"] == "hr"


async def test_every_answer_validates_against_the_published_output_schema(
    db_path: Path,
) -> None:
    """With ``--output-schemas`` (for clients that check results) a success, an unchanged
    write, a refusal and a page with no next cursor all fit what is published."""
    db = published(db_path, EXAMPLE_SCHEMA)
    async with stdio_agent(db, extra=("--output-schemas",)) as agent:
        schemas = {t["name"]: t["outputSchema"] for t in await listed(agent)}
        ada = {"label": "Person", "merge_keys": {"name": "Ada"}, **PROV}
        answers = [
            ("write_node", await agent.call("write_node", ada)),
            ("write_node", await agent.call("write_node", ada)),
            ("write_node", await agent.call("write_node", {**ada, "properties": {"age": "x"}})),
            ("search_nodes", await agent.call("search_nodes", {"query": "ada"})),
            ("get_schema", await agent.call("get_schema", {"labels": ["Nope"]})),
        ]
    statuses = [a.data.get("status") for _, a in answers]
    assert statuses[:3] == ["written", "unchanged", "rejected"]
    assert answers[3][1].data["next_cursor"] is None
    for tool, answer in answers:
        jsonschema.validate(answer.data, schemas[tool])


async def test_an_agent_does_through_the_default_catalogue_what_the_label_tools_did(
    db_path: Path,
) -> None:
    """Every write and read, with a label's enum learnt from get_schema and its
    relationship written as the schema declares it."""
    async with stdio_agent(published(db_path, EXAMPLE_SCHEMA)) as agent:
        names = set(await agent.tool_names())
        service = (await agent.call("get_schema", {"labels": ["Service"]})).data["document"]
        tiers = service["nodes"]["Service"]["properties"]["tier"]["enum"]
        owned = service["nodes"]["Service"]["properties"]["owner"]["relationship"]
        billing = {"label": "Service", "merge_keys": {"name": "billing"}, **PROV}
        bad = await agent.call("write_node", {**billing, "properties": {"tier": 9}})
        assert (bad.is_error, bad.data["error_code"]) == (True, "SCHEMA_ENUM_VIOLATION")
        wrote = await agent.call("write_node", {**billing, "properties": {"tier": tiers[1]}})
        assert wrote.data["status"] == "written", wrote
        seen = await agent.call(
            "record_observation", {"text": "Initech owns billing.", "source": "chat", **PROV}
        )
        link = {
            "type": owned["type"],
            "from_label": "Service",
            "from_keys": {"name": "billing"},
            "to_label": owned["to"],
            "to_keys": {owned["key"]: "Initech"},
            "endpoint_policy": "merge_endpoints",
            "observations": [seen.data["observation_id"]],
            **PROV,
        }
        assert (await agent.call("write_relationship", link)).data["status"] == "written"
        batch = await agent.call(
            "write_batch",
            {"items": [{"op": "write_node", **billing, "properties": {"language": "go"}}]},
        )
        assert batch.data["status"] == "written", batch
        node = {"label": "Service", "merge_keys": {"name": "billing"}}
        opened = await agent.call("open_nodes", {"nodes": [node]})
        assert {n["label"] for n in opened.data["nodes"]} == {"Service", "Organization"}
        reads = {
            "search_nodes": {"query": "billing"},
            "search_observations": {"query": "Initech"},
            "open_observation": {"observation_id": seen.data["observation_id"]},
            "graph_query": {"query": "who owns billing"},
            "neighbors": {"node": node},
            "find_path": {
                "from": node,
                "to": {"label": "Organization", "merge_keys": {"name": "Initech"}},
            },
            "node_history": {"node": node},
        }
        for tool, arguments in reads.items():
            answer = await agent.call(tool, arguments)
            assert not answer.is_error, (tool, answer.data)
        found = await agent.call("graph_query", {"query": "who owns billing"})
        assert any(t["relationship"] == "OWNED_BY" for t in found.data["triplets"])
        assert (await agent.call("delete_relationship", {**_ends(link), **PROV})).data[
            "status"
        ] == "deleted"
        gone = await agent.call("delete_node", {**billing, "detach": True})
        assert gone.data["status"] == "deleted", gone
        assert (await agent.call("refresh_schema_cache", {})).data["status"] == "refreshed"
    assert {"graph_improve", "write_batch", "delete_node", "delete_relationship"} <= names


def _ends(link: dict[str, Any]) -> dict[str, Any]:
    return {k: link[k] for k in ("type", "from_label", "from_keys", "to_label", "to_keys")}
