"""What an answer says of an observation (issue 41, defects 5 and 6): ``graph_query``'s carry
the extraction method and the event that recorded them, as ``search_observations`` and
``open_observation`` do; ``search_observations`` says why (the index's score, the words
matched); and the words listed are exactly the query's words the index matched — its
stems, never a stop word that was not searched."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA
from tests.server.harness import stdio_agent
from writegate.eventlog import Actor
from writegate.gate import Gate, ObservationResult

pytestmark = pytest.mark.anyio
SAID = "Caroline: that was my best camping memory, by the lake."


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def said(db_path: Path) -> tuple[Path, ObservationResult]:
    with Gate.open(db_path, default_actor=Actor(agent="scribe")) as gate:
        assert gate.publish_schema(SEED_SCHEMA).status == "published"
        kept = gate.record_observation(
            text=SAID, source="chat", extraction_method="parsed", session="s-1"
        )
        assert isinstance(kept, ObservationResult), kept
    return db_path, kept


async def test_an_observation_answered_says_how_it_was_kept_and_why_it_was_found(
    said: tuple[Path, ObservationResult],
) -> None:
    db, kept = said
    question = "Where has Caroline camped to the lake?"
    async with stdio_agent(db, "reader-1", ("reader",)) as agent:
        asked = await agent.call("graph_query", {"query": question})
        searched = await agent.call("search_observations", {"query": question})
        opened = await agent.call("open_observation", {"observation_id": kept.observation_id})
    (answered,) = asked.data["observations"]
    assert answered["extractionMethod"] == opened.data["extraction_method"] == "parsed"
    assert answered["seq"] == opened.data["seq"] == kept.seq
    assert answered["terms"] == ["caroline", "camped", "lake"]  # a stem; no "to", "where"
    (hit,) = searched.data["observations"]
    assert hit["terms"] == ["caroline", "camped", "lake"]
    assert hit["score"] > 0
