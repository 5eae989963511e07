"""graph_improve and audit_feedback over MCP, through the official SDK client: an agent rates
an answer once, a reader never sees the tool, a writer the policy keeps from a label may
not move that label's weights, and the CLI answers exactly as the tools do."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from tests.cli.conftest import as_json
from tests.conftest import FIXTURES, seed_document
from tests.server.harness import Served, http_agent, http_server, stdio_agent
from writegate.eventlog import EventLog
from writegate.gate import Gate
from writegate.gate.server.policy import DEFAULT_POLICY_FILE
from writegate.gate.server.tokens import create_token
from writegate.projections.state import feedback_weights

pytestmark = pytest.mark.anyio
ALICE = 'Person{"name":"Alice"}'
BOB = 'Person{"name":"Bob"}'
LAUNCH = 'Event{"name":"Launch"}'
KNOWS = {"sourceId": ALICE, "targetId": BOB, "relationshipName": "KNOWS"}
RATED = {
    "sessionId": "sess-1",
    "outcome": "accepted",
    "usedNodeIds": [ALICE],
    "usedEdgeKeys": [KNOWS],
}
CLAIM: dict[str, Any] = {"source": "test", "extraction_method": "api"}


def graph(db: Path) -> Path:
    """Seed 000's schema with :Event, and Alice -KNOWS-> Bob, Launch."""
    document = seed_document()
    document["nodes"]["Event"] = {"merge_keys": ["name"], "required": ["name"]}
    with Gate.open(db) as gate:
        assert gate.publish_schema(document).status == "published"
        for label, name in (("Person", "Alice"), ("Person", "Bob"), ("Event", "Launch")):
            gate.write_node(label=label, merge_keys={"name": name}, **CLAIM)
        written = gate.write_relationship(
            type="KNOWS",
            from_label="Person",
            from_keys={"name": "Alice"},
            to_label="Person",
            to_keys={"name": "Bob"},
            **CLAIM,
        )
        assert written.status == "written"
    return db


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Served]:
    s = Served(request.param, graph(db_path))
    yield s
    s.close()


def head(db: Path) -> tuple[int, str]:
    with EventLog(db, create=False) as log:
        return log.head()


def weight(db: Path, identity: str) -> float:
    with Gate.open(db, readonly=True) as gate:
        return feedback_weights(gate.log.connection(), [identity])[identity]


async def test_an_agent_rates_an_answer_once(served: Served) -> None:
    async with served.agent("answerer") as agent:
        assert "graph_improve" in await agent.tool_names()
        first = await agent.call("graph_improve", RATED)
        assert not first.is_error, first.data
        assert first.data == {
            "status": "applied",
            "nodeUpdates": 1,
            "edgeUpdates": 1,
            "seq": first.data["seq"],
            "event_id": first.data["event_id"],
        }
        after = head(served.db)
        again = await agent.call("graph_improve", {**RATED, "usedNodeIds": [ALICE, ALICE]})
        assert again.data == {
            **first.data,
            "status": "unchanged",
            "nodeUpdates": 0,
            "edgeUpdates": 0,
        }
        for wrong in ({"outcome": "great"}, {"sessionId": ""}, {"usedNodeIds": [7]}):
            refused = await agent.call("graph_improve", {**RATED, **wrong})
            assert refused.is_error
            assert refused.data["error_code"] == "INVALID_ARGUMENT", refused.data
        other = await agent.call("graph_improve", {**RATED, "outcome": "rejected"})
        assert other.data["error_code"] == "FEEDBACK_ALREADY_GIVEN"
        assert head(served.db) == after
    assert weight(served.db, ALICE) == pytest.approx(0.65)


async def test_a_reader_does_not_see_the_tool_and_cannot_call_it(served: Served) -> None:
    before = head(served.db)
    async with served.agent("reader-1", roles=("reader",)) as reader:
        assert "graph_improve" not in await reader.tool_names()
        with pytest.raises(MCPError) as denied:  # the same answer as a tool that is not there
            await reader.call("graph_improve", RATED)
        assert denied.value.error.message == "Unknown tool: graph_improve"
    assert head(served.db) == before
    assert weight(served.db, ALICE) == 0.5


async def test_a_writer_kept_from_a_label_may_not_move_its_weights(db_path: Path) -> None:
    policies = (
        "--policy",
        str(DEFAULT_POLICY_FILE),
        "--policy",
        str(FIXTURES / "policies-event-writer.cedar"),  # calendar-bot writes :Event only
    )
    with http_server(graph(db_path), extra=policies) as server:
        bot = create_token(Path(str(db_path) + ".tokens.json"), "calendar-bot", ("writer",))
        async with http_agent(server.url, bot) as agent:
            before = head(db_path)
            denied = await agent.call("graph_improve", RATED)
            assert denied.is_error
            assert denied.data["error_code"] == "POLICY_DENIED"
            assert denied.data["details"]["denied"] == ["Label::Person", "RelationshipType::KNOWS"]
            assert head(db_path) == before
            event = {"sessionId": "sess-2", "outcome": "rework", "usedNodeIds": [LAUNCH]}
            allowed = await agent.call("graph_improve", event)
            assert allowed.data["status"] == "applied", allowed.data
    assert weight(db_path, ALICE) == 0.5


async def test_the_cli_answers_as_the_tools_do(db_path: Path, tmp_path: Path) -> None:
    graph(db_path)
    twin = tmp_path / "twin.db"  # the same log: the CLI's feedback lands at the same seq
    shutil.copy(db_path, twin)
    async with stdio_agent(db_path, "tester") as agent:
        first = await agent.call("graph_improve", RATED)
        again = await agent.call("graph_improve", RATED)
    improve = ["improve", "sess-1", "--outcome", "accepted", "--node", "Person:name=Alice"]
    improve += ["--edge", "KNOWS", "Person:name=Alice", BOB, "--format", "json"]
    for tool in (first, again):
        said = as_json(twin, *improve)
        assert said == {**tool.data, "event_id": said["event_id"]}  # a random id each
    async with stdio_agent(db_path, "auditor-1", roles=("auditor",)) as auditor:
        trail = await auditor.call("audit_feedback", {})
        one = await auditor.call("audit_feedback", {"identity": ALICE})
    assert as_json(db_path, "audit", "feedback", "--format", "json") == trail.data
    node = as_json(db_path, "audit", "feedback", "--node", ALICE, "--format", "json")
    assert node == one.data
    [move] = one.data["moves"]
    assert (move["agent"], move["outcome"], move["before"]) == ("tester", "accepted", 0.5)
    assert move["after"] == pytest.approx(0.65)
    assert trail.data["weights"] == pytest.approx(
        {ALICE: 0.65, f"({ALICE})-[KNOWS]->({BOB})": 0.65}
    )
