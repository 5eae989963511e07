"""The CLI's read commands and the MCP read tools give the same answer to the same question
(issue 10, acceptance 4): the CLI's JSON equals the tool's structured result, asked of one
history through the official SDK client over stdio."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from tests.cli.conftest import as_json, writegate
from tests.server.harness import stdio_agent
from writegate.language import node_identity

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def ref(label: str, name: str) -> dict[str, Any]:
    return {"label": label, "merge_keys": {"name": name}}


QUESTIONS: list[tuple[list[str], str, dict[str, Any]]] = [
    (["search", "ali"], "search_nodes", {"query": "ali"}),
    (["search", "person", "--limit", "2"], "search_nodes", {"query": "person", "limit": 2}),
    (
        ["open", "Person:name=Alice", "person:name=Carol"],
        "open_nodes",
        {"nodes": [ref("Person", "Alice"), ref("person", "Carol")]},
    ),
    (["neighbors", "Person:name=Alice"], "neighbors", {"node": ref("Person", "Alice")}),
    (
        ["neighbors", "person:name=Carol", "--depth", "2", "--limit", "2"],
        "neighbors",
        {"node": ref("person", "Carol"), "depth": 2, "limit": 2},
    ),
    (
        ["neighbors", 'Person{"name":"Carol"}', "--depth", "3", "--type", "KNOWS"],
        "neighbors",
        {"node": ref("Person", "Carol"), "depth": 3, "relationship_type": "KNOWS"},
    ),
    (
        ["path", "Person:name=Carol", "Organization:name=Initech"],
        "find_path",
        {"from": ref("Person", "Carol"), "to": ref("Organization", "Initech")},
    ),
    (  # the old spelling, deprecated, answers the same
        [
            "path",
            "--from",
            "Person",
            "-f",
            "name=Bob",
            "--to",
            "Organization",
            "-t",
            "name=Initech",
        ],
        "find_path",
        {"from": ref("Person", "Bob"), "to": ref("Organization", "Initech")},
    ),
    (
        ["path", "Person:name=Carol", "Organization:name=Initech", "--max-depth", "1"],
        "find_path",
        {"from": ref("Person", "Carol"), "to": ref("Organization", "Initech"), "max_depth": 1},
    ),
    (["query", "alice"], "graph_query", {"query": "alice"}),
    (
        ["query", "carol initech", "--top-k", "3", "--depth", "1", "--relationship", "KNOWS"],
        "graph_query",
        {
            "query": "carol initech",
            "topK": 3,
            "neighborhoodDepth": 1,
            "relationshipFilter": "KNOWS",
        },
    ),
    (
        ["query", "alice", "--as-of", "2032-01-01T09:10:00Z"],
        "graph_query",
        {"query": "alice", "asOf": "2032-01-01T09:10:00Z"},
    ),
]


async def test_each_read_command_answers_as_its_mcp_tool(history: Path) -> None:
    answers: list[tuple[list[str], dict[str, Any]]] = []
    async with stdio_agent(history, "reader-1", ("reader",)) as agent:
        for command, tool, arguments in QUESTIONS:
            outcome = await agent.call(tool, arguments)
            assert not outcome.is_error, outcome.data
            answers.append((command, outcome.data))
        second_page = await agent.call(
            "search_nodes", {"query": "person", "limit": 2, "cursor": answers[1][1]["next_cursor"]}
        )
        around = await agent.call("neighbors", {"node": ref("Person", "Alice"), "depth": 2})
    for command, tool_answer in answers:
        assert as_json(history, *command, "--format", "json") == tool_answer, command
    cursor = answers[1][1]["next_cursor"]
    assert cursor is not None
    assert (
        as_json(history, "search", "person", "--limit", "2", "--cursor", cursor, "--format", "json")
        == second_page.data
    )
    assert answers[6][1]["length"] == 2  # the history has the two-hop path the test means
    assert answers[7][1]["found"] is False
    assert answers[9][1]["triplets"], "the question about Alice finds her relationships"

    graphml = writegate(
        history, "export", "graphml", "--around", "Person:name=Alice", "--depth", "2"
    )
    drawn = nx.read_graphml(io.BytesIO(graphml.stdout.encode()), force_multigraph=True)
    nodes = around.data["nodes"]
    assert set(drawn.nodes) == {node_identity(n["label"], n["merge_keys"]) for n in nodes}
    assert set(drawn.edges(keys=True)) == {  # type: ignore[call-overload]
        (
            node_identity(e["from"]["label"], e["from"]["merge_keys"]),
            node_identity(e["to"]["label"], e["to"]["merge_keys"]),
            e["type"],
        )
        for e in around.data["edges"]
    }


def test_a_refused_read_is_one_line(history: Path) -> None:
    missing = writegate(history, "neighbors", "Person:name=Nobody", code=1)
    assert missing.stderr == 'error: NODE_NOT_FOUND: node Person{"name":"Nobody"} does not exist\n'
    bad = writegate(history, "neighbors", "Person:name=Alice", "--type", "no-such type", code=1)
    assert bad.stderr.startswith("error: INVALID_IDENTIFIER:")
    assert len(bad.stderr.splitlines()) == 1
