"""merge_nodes and unmerge_nodes over MCP (issue 12, acceptance 4): a reviewer merges two
people an agent wrote apart and undoes it; the JSONL projection rebuilt from the log is the
same after the unmerge as before the merge; writers never see the tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import MCPError

from tests.conftest import ROOT
from tests.server.conftest import published
from tests.server.harness import Agent, Served
from writegate.eventlog import EventLog
from writegate.gate import Gate
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.runner import replay
from writegate.projections.state import StateProjection

pytestmark = pytest.mark.anyio
CLAIM = {"source": "chat", "extraction_method": "api", "reliability": 0.8}
MERGE_TOOLS = {"merge_nodes", "unmerge_nodes"}
LAST = ("Written By:", "Last Updated:")


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Served]:
    s = Served(request.param, published(db_path, ROOT / "fixtures" / "conflict_schema.yaml"))
    yield s
    s.close()


def projected(db: Path, out: Path) -> list[dict[str, object]]:
    """The JSONL projection rebuilt from the whole log, less who wrote each line last and
    when (a merge and an unmerge are writes too; the claims they restore are not theirs)."""
    out.unlink(missing_ok=True)
    with EventLog(db, create=False, inline=[StateProjection()]) as log:
        projector = JsonlProjector(out, log)
        try:
            replay(log, projector)
        finally:
            projector.close()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for line in lines:
        line["metadata"] = [m for m in line.get("metadata", []) if not m.startswith(LAST)]
    return lines


async def person(agent: Agent, name: str, **properties: object) -> None:
    out = await agent.call(
        "write_node",
        {"label": "Person", "merge_keys": {"name": name}, "properties": properties, **CLAIM},
    )
    assert out.data["status"] == "written", out.data


async def test_a_reviewer_merges_and_unmerges(served: Served, tmp_path: Path) -> None:
    async with served.agent("chat-agent") as writer:
        await person(writer, "Grace Hopper", role="admiral")
        await person(writer, "grace hopper", city="Arlington")
        knows = {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": "grace hopper"},
                 "to_label": "Person", "to_keys": {"name": "Ada"},
                 "endpoint_policy": "merge_endpoints", **CLAIM}  # fmt: skip
        assert (await writer.call("write_relationship", knows)).data["status"] == "written"
        assert not MERGE_TOOLS & set(await writer.tool_names())
        with pytest.raises(MCPError) as denied:  # indistinguishable from an unknown tool
            await writer.call("merge_nodes", {})
        assert denied.value.error.message == "Unknown tool: merge_nodes"
    before = projected(served.db, tmp_path / "before.jsonl")
    async with served.agent("rev-1", roles=("reviewer",)) as reviewer:
        assert set(await reviewer.tool_names()) >= MERGE_TOOLS
        merged = await reviewer.call(
            "merge_nodes",
            {"label": "Person", "survivor_keys": {"name": "Grace Hopper"},
             "duplicate_keys": {"name": "grace hopper"}, "reason": "one person",
             "source": "review", "extraction_method": "manual"},
        )  # fmt: skip
        assert merged.data["status"] == "merged", merged.data
        assert merged.data["taken"] == ["city"]
        assert merged.data["relationships_moved"] == 1
        during = projected(served.db, tmp_path / "during.jsonl")
        assert [n["name"] for n in during if n["type"] == "node"] == ["Ada", "Grace Hopper"]
        assert {"edgeType": "KNOWS", "from": "Grace Hopper", "to": "Ada"}.items() <= during[
            -1
        ].items()
        undone = await reviewer.call(
            "unmerge_nodes",
            {"merge": merged.data["merge"], "source": "review", "extraction_method": "manual"},
        )
        assert undone.data["status"] == "unmerged", undone.data
        again = await reviewer.call(
            "unmerge_nodes",
            {"merge": merged.data["merge"], "source": "review", "extraction_method": "manual"},
        )
        assert again.data["error_code"] == "MERGE_NOT_FOUND"
    assert projected(served.db, tmp_path / "after.jsonl") == before
    with Gate.open(served.db) as gate:
        assert gate.verify().ok
