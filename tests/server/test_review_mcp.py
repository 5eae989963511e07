"""The review lane (issue 12, acceptance 5): a held write changes no projection until
approved; approval applies it; rejection leaves no trace in the graph but stays in the
trail; agents without the reviewer role cannot see or call the review tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import MCPError

from tests.conftest import ROOT
from tests.console import run as writegate_run
from tests.server.conftest import published
from tests.server.harness import Agent, Served
from writegate.eventlog import EventLog
from writegate.gate import Gate
from writegate.language import ProposalDecided, WriteProposed, payload_of
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.prov import ProvProjector
from writegate.projections.runner import replay
from writegate.projections.state import StateProjection

pytestmark = pytest.mark.anyio
CHAT = {"source": "chat", "extraction_method": "llm", "reliability": 0.5}  # confidence 0.3
HR = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.95}


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest, db_path: Path, tmp_path: Path) -> Iterator[Served]:
    """The conflict example schema, with people held below confidence 0.5 and titles
    changed only by review."""
    document = yaml.safe_load((ROOT / "fixtures" / "conflict_schema.yaml").read_text())
    document["nodes"]["Person"]["review_below"] = 0.5
    document["nodes"]["Person"]["properties"]["title"] = {"type": "string", "conflict": "review"}
    schema = tmp_path / "review_schema.yaml"
    schema.write_text(yaml.safe_dump(document))
    s = Served(request.param, published(db_path, schema))
    yield s
    s.close()


async def ada(agent: Agent, claim: dict[str, Any], **properties: Any) -> Any:
    arguments = {"label": "Person", "merge_keys": {"name": "Ada"}, "properties": properties}
    return await agent.call("write_node", {**arguments, **claim})


def graph_of(db: Path, tmp: Path) -> tuple[dict[str, Any], str]:
    """The state read model's view of Ada, and the JSONL projection rebuilt from the log."""
    out = tmp / "graph.jsonl"
    with EventLog(db, create=False, inline=[StateProjection()]) as log:
        node = StateProjection().node(log.connection(), 'Person{"name":"Ada"}')
        projector = JsonlProjector(out, log)
        try:
            replay(log, projector)
        finally:
            projector.close()
    return (node.properties if node else {}), out.read_text() if out.exists() else ""


def provenance_of(db: Path, tmp: Path) -> str:
    """The PROV-O projection rebuilt from the log, as text."""
    out = tmp / "prov.nt"
    out.unlink(missing_ok=True)
    out.with_name("prov.nt.checkpoint.json").unlink(missing_ok=True)
    with EventLog(db, create=False) as log:
        replay(log, ProvProjector(out))
    return out.read_text()


async def test_a_held_write_waits_for_approval(served: Served, tmp_path: Path) -> None:
    async with served.agent("chat-agent") as chat:
        held = await ada(chat, CHAT, role="engineer")
    assert not held.is_error, held.data
    assert held.data["status"] == "proposed"
    assert "below the review floor 0.5" in held.data["reason"]
    assert graph_of(served.db, tmp_path) == ({}, "")  # no state, no projection
    assert "Ada" not in provenance_of(served.db, tmp_path)
    assert "write.proposed" not in provenance_of(served.db, tmp_path)
    async with served.agent("rev-1", roles=("reviewer",)) as reviewer:
        queue = await reviewer.call("review_queue", {})
        assert queue.data["pending"] == 1
        [proposal] = queue.data["proposals"]
        assert (proposal["agent"], proposal["source"]) == ("chat-agent", "chat")
        decided = await reviewer.call(
            "review_decide",
            {"proposal": held.data["proposal"], "decision": "approve", "note": "checked"},
        )
        again = await reviewer.call(
            "review_decide", {"proposal": held.data["proposal"], "decision": "reject"}
        )
    assert not decided.is_error, decided.data
    assert (decided.data["status"], decided.data["decision"]) == ("decided", "approved")
    assert decided.data["result"]["status"] == "written"
    assert again.data["error_code"] == "PROPOSAL_NOT_PENDING"
    properties, projected = graph_of(served.db, tmp_path)
    assert properties == {"name": "Ada", "role": "engineer"}
    assert '"name":"Ada"' in projected
    assert "Ada" in provenance_of(served.db, tmp_path)  # applied: its activity, its version
    with Gate.open(served.db) as gate:
        assert gate.verify().ok
        events = gate.log.read().events
    applied = events[-1]
    assert applied.actor.agent == "chat-agent"  # the writer's write, as if sent then
    decision = payload_of(events[-2])
    assert isinstance(decision, ProposalDecided)
    assert (decision.reviewer, decision.decision, decision.note) == ("rev-1", "approved", "checked")


async def test_a_rejected_write_leaves_the_graph_and_keeps_the_trail(
    served: Served, tmp_path: Path
) -> None:
    async with served.agent("hr-import") as hr:
        await ada(hr, HR, title="Dr")
        held = await ada(hr, HR, title="Countess")  # a change under conflict: review
    assert held.data["status"] == "proposed"
    assert "conflict: review" in held.data["reason"]
    async with served.agent("rev-1", roles=("reviewer",)) as reviewer:
        decided = await reviewer.call(
            "review_decide", {"proposal": held.data["proposal"], "decision": "reject"}
        )
    assert decided.data["decision"] == "rejected"
    assert graph_of(served.db, tmp_path)[0]["title"] == "Dr"
    assert "Countess" not in provenance_of(served.db, tmp_path)  # in the trail only
    with Gate.open(served.db) as gate:
        kinds = [type(payload_of(e)) for e in gate.log.read().events]
        assert gate.reviews.queue().pending == 0
    assert kinds[-2:] == [WriteProposed, ProposalDecided]  # in the trail, not in the graph
    out = writegate_run(["--db", str(served.db), "review", "list", "--all", "--format", "json"])
    assert out.returncode == 0, out.stderr
    [listed] = json.loads(out.stdout)["proposals"]
    assert (listed["status"], listed["agent"]) == ("rejected", "hr-import")


async def test_only_reviewers_see_the_review_tools(served: Served) -> None:
    async with served.agent("writer-1") as writer:
        names = await writer.tool_names()
        for name in ("review_queue", "review_decide"):
            with pytest.raises(MCPError) as denied:  # indistinguishable from an unknown tool
                await writer.call(name, {"proposal": "x", "decision": "approve"})
            assert denied.value.error.code == -32602
            assert denied.value.error.message == f"Unknown tool: {name}"
    assert not {"review_queue", "review_decide"} & set(names)
    async with served.agent("rev-1", roles=("reviewer",)) as reviewer:
        assert {"review_queue", "review_decide"} <= set(await reviewer.tool_names())


async def test_auditors_read_the_review_queue_in_the_report(served: Served) -> None:
    """The report lists the writes held for review — who, what, when, why — for auditors
    over MCP (the same model as ``writegate report --json``); no other role sees the tool."""
    async with served.agent("chat-agent") as chat:
        held = await ada(chat, CHAT, role="engineer")
        assert held.data["status"] == "proposed"
    async with served.agent("auditor-1", roles=("auditor",)) as auditor:
        assert "report" in await auditor.tool_names()
        found = await auditor.call("report", {})
    assert not found.is_error, found.data
    assert found.data["pending_reviews"] == 1
    [queued] = found.data["review_queue"]
    assert (queued["proposal"], queued["agent"], queued["operation"]) == (
        held.data["proposal"],
        "chat-agent",
        "write_node",
    )
    assert queued["target"] == 'Person{"name":"Ada"}'
    assert queued["proposed_at"]
    assert "below the review floor" in queued["reason"]
    out = writegate_run(["--db", str(served.db), "report", "--json"])
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["review_queue"] == found.data["review_queue"]
    markdown = writegate_run(["--db", str(served.db), "report", "--markdown"]).stdout
    assert held.data["proposal"] in markdown
    for role in ("writer", "reviewer", "reader"):
        async with served.agent(f"{role}-1", roles=(role,)) as other:
            assert "report" not in await other.tool_names()
            with pytest.raises(MCPError) as denied:
                await other.call("report", {})
            assert denied.value.error.message == "Unknown tool: report"
