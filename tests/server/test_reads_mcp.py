"""Read tools and resources: bounded, paged, and carrying provenance."""

from __future__ import annotations

import json

import pytest
from mcp import types

from tests.conftest import person
from tests.server.harness import Agent, Served

pytestmark = pytest.mark.anyio


async def _text(agent: Agent, uri: str) -> str:
    """A resource's one text part (writegate serves JSON resources as text)."""
    contents = (await agent.client.read_resource(uri)).contents
    assert len(contents) == 1
    assert isinstance(contents[0], types.TextResourceContents)
    return contents[0].text


async def test_schema_and_stats_resources(served: Served) -> None:
    async with served.agent() as agent:
        await agent.call("write_node", person("Ada"))
        listed = await agent.client.list_resources()
        assert {str(r.uri) for r in listed.resources} == {"writegate://schema", "writegate://stats"}
        schema = json.loads(await _text(agent, "writegate://schema"))
        stats = json.loads(await _text(agent, "writegate://stats"))
        tool = await agent.call("get_schema", {})
    assert set(schema["document"]["nodes"]) == {"Person", "Organization", "Entity"}
    assert tool.data["schema_version"] == schema["schema_version"]
    assert stats["nodes"] == 1
    assert stats["labels"] == {"Person": 1}
    assert stats["events"] == 2


async def test_search_pages_with_a_cursor(served: Served) -> None:
    async with served.agent() as agent:
        for i in range(5):
            await agent.call("write_node", person(f"Page{i}"))
        seen: list[str] = []
        cursor = None
        for _ in range(5):
            out = await agent.call(
                "search_nodes",
                {"query": "page", "limit": 2, **({"cursor": cursor} if cursor else {})},
            )
            seen += [n["merge_keys"]["name"] for n in out.data["nodes"]]
            cursor = out.data["next_cursor"]
            if cursor is None:
                break
        too_big = await agent.call("search_nodes", {"query": "page", "limit": 100_000})
    assert seen == [f"Page{i}" for i in range(5)]
    assert too_big.is_error
    assert too_big.data["error_code"] == "INVALID_ARGUMENT"


async def test_node_history_is_the_provenance_trail(served: Served) -> None:
    async with served.agent("historian") as agent:
        await agent.call("write_node", person("Ada", extraction_method="llm", reliability=0.8))
        await agent.call(
            "write_node",
            person("Ada", properties={"age": 37}, source="registry", extraction_method="api"),
        )
        out = await agent.call(
            "node_history", {"node": {"label": ":person", "merge_keys": {"name": "Ada"}}}
        )
        missing = await agent.call(
            "node_history", {"node": {"label": "Person", "merge_keys": {"name": "Nobody"}}}
        )
    entries = out.data["entries"]
    assert [(e["agent"], e["source"], e["extraction_method"]) for e in entries] == [
        ("historian", "test", "llm"),
        ("historian", "registry", "api"),
    ]
    assert [e["confidence"] for e in entries] == [
        pytest.approx(0.8 * 0.6),
        pytest.approx(0.9 * 1.0),
    ]
    assert entries[1]["changes"] == {"age": 37}
    assert missing.data["error_code"] == "NODE_NOT_FOUND"


async def test_audit_tools_are_for_auditors_only(served: Served) -> None:
    async with served.agent("writer-1", ("writer",)) as writer:
        await writer.call("write_node", person("Ada"))
        await writer.call("write_node", person("Ada", properties={"age": 37}))
        assert "audit_events" not in await writer.tool_names()
    async with served.agent("auditor-1", ("auditor",)) as auditor:
        names = await auditor.tool_names()
        assert {"audit_events", "integrity_report", "search_nodes"} <= set(names)
        assert "write_node" not in names
        page = await auditor.call(
            "audit_events",
            {
                "agent": "writer-1",
                "node": {"label": "Person", "merge_keys": {"name": "Ada"}},
                "limit": 1,
            },
        )
        assert [e["seq"] for e in page.data["events"]] == [2]
        assert page.data["events"][0]["provenance"]["source"] == "test"
        rest = await auditor.call(
            "audit_events", {"agent": "writer-1", "cursor": page.data["next_cursor"]}
        )
        assert [e["seq"] for e in rest.data["events"]] == [3]
        report = await auditor.call("integrity_report", {})
    assert report.data["ok"] is True
    assert report.data["head_seq"] == 3
    assert [c["name"] for c in report.data["checks"]] == [
        "hash chain",
        "append-only triggers",
        "history index",
        "state read model",
    ]
