"""The graph_query tool over the official MCP SDK client: published with seed 004's argument
names, answering with seed 004's triplet shape, refusing a blank question as search does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import write_history
from tests.conftest import SEED_SCHEMA
from tests.server.harness import stdio_agent
from writegate.eventlog import Actor
from writegate.gate import Gate, ObservationResult

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_graph_query_answers_an_agent_with_ranked_triplets(tmp_path: Path) -> None:
    history = write_history(tmp_path / "history.db")
    async with stdio_agent(history, "reader-1", ("reader",)) as agent:
        listed = await agent.client.list_tools()
        tool = next(t for t in listed.tools if t.name == "graph_query")
        assert {
            "query",
            "topK",
            "neighborhoodDepth",
            "relationshipFilter",
            "asOf",
            "validAt",
        } <= set(tool.input_schema["properties"])
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint
        found = await agent.call("graph_query", {"query": "Alice Initech", "topK": 5})
        snake = await agent.call("graph_query", {"query": "Alice Initech", "top_k": 5})
        blank = await agent.call("graph_query", {"query": "   "})
        deep = await agent.call("graph_query", {"query": "Alice", "neighborhoodDepth": 9})
    assert not found.is_error, found.data
    assert snake.data == found.data
    first = found.data["triplets"][0]
    assert set(first) == {
        "sourceEntity",
        "relationship",
        "targetEntity",
        "relevanceScore",
        "source",
        "target",
        "provenance",
        "why",
    }
    assert (first["sourceEntity"], first["relationship"], first["targetEntity"]) == (
        'Person{"name":"Alice"}',
        "WORKS_FOR",
        'Organization{"name":"Initech"}',
    )
    assert first["target"] == {"label": "Organization", "merge_keys": {"name": "Initech"}}
    assert {"eventId", "seq", "observationIds", "agent", "session", "recordedAt"} <= set(
        first["provenance"]
    )
    assert first["why"]["terms"] == ["alice", "initech"]
    assert found.data["observations"] == []
    assert blank.is_error
    assert blank.data["error_code"] == "INVALID_ARGUMENT"
    assert deep.is_error
    assert deep.data["error_code"] == "INVALID_ARGUMENT"


async def test_graph_query_answers_as_many_observations_as_asked_within_a_bound(
    tmp_path: Path,
) -> None:
    """Issue 41, defect 4: the answer's observations were 10 whatever was asked."""
    db = tmp_path / "said.db"
    with Gate.open(db, default_actor=Actor(agent="recorder")) as gate:
        assert gate.publish_schema(SEED_SCHEMA).status == "published"
        for n in range(40):
            kept = gate.record_observation(
                text=f"turn {n}: the lighthouse keeper waved",
                source="chat",
                extraction_method="parsed",
                session=f"s-{n}",  # each its own session: no context lent
            )
            assert isinstance(kept, ObservationResult), kept
    async with stdio_agent(db, "reader-1", ("reader",)) as agent:
        default = await agent.call("graph_query", {"query": "lighthouse keeper"})
        more = await agent.call("graph_query", {"query": "lighthouse keeper", "observations": 25})
        beyond = await agent.call("graph_query", {"query": "lighthouse", "observations": 51})
    assert len(default.data["observations"]) == 10
    assert len(more.data["observations"]) == 25
    assert beyond.is_error


async def test_a_question_whose_embedder_fails_is_refused_with_its_code(tmp_path: Path) -> None:
    """An embedder that loads but cannot embed (its model's files gone) was answered as an
    internal error naming only the exception's class."""
    history = write_history(tmp_path / "history.db")
    spec = "tests.projections.hashing_embedder:FilesGoneEmbedder"
    env = {"WRITEGATE_EMBEDDINGS__PROVIDER": spec}
    async with stdio_agent(history, "reader-1", ("reader",), env) as agent:
        asked = await agent.call("graph_query", {"query": "Alice Initech"})
        searched = await agent.call("search_nodes", {"query": "Alice"})
    assert asked.is_error
    assert asked.data == {
        "status": "rejected",
        "error_code": "EMBEDDER_UNAVAILABLE",
        "message": "embedder 'files-gone': its model files are not installed",
        "details": {"provider": spec},
    }
    assert not searched.is_error  # the words still answer
