"""Authority through MCP (issue 43, acceptance 2): an agent's ``llm`` write cannot supersede
a ``manual`` value, the refusal names both authorities, and ``open_nodes`` and
``graph_query`` answer each fact with its authority — recalled memory as data of a stated
trust. ``record_observation``'s arguments stay as they were (the catalogue's budget): an
observation's own lineage is given through the command line and the Python API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.gate.test_authority import LLM, MANUAL, SCHEMA
from tests.server.conftest import published
from tests.server.harness import Served

pytestmark = pytest.mark.anyio
ADA = {"label": "Person", "merge_keys": {"name": "Ada"}}


@pytest.fixture
def served(db_path: Path, tmp_path: Path) -> Iterator[Served]:
    schema = tmp_path / "authority.yaml"
    schema.write_text(yaml.safe_dump(SCHEMA))
    s = Served("stdio", published(db_path, schema))
    yield s
    s.close()


async def test_an_agent_sees_authority_and_cannot_supersede_higher(served: Served) -> None:
    async with served.agent("desk") as desk, served.agent("chat-agent") as chat:
        written = await desk.call("write_node", {**ADA, "properties": {"city": "London"}, **MANUAL})
        assert not written.is_error, written.data
        refused = await chat.call("write_node", {**ADA, "properties": {"city": "Paris"}, **LLM})
        knows = await chat.call(
            "write_relationship",
            {
                "type": "KNOWS",
                "from_label": "Person",
                "from_keys": {"name": "Ada"},
                "to_label": "Person",
                "to_keys": {"name": "Grace"},
                "endpoint_policy": "merge_endpoints",
                **LLM,
            },
        )
        opened = await chat.call("open_nodes", {"nodes": [ADA]})
        answer = await chat.call("graph_query", {"query": "Ada Grace"})
        lineage = await chat.call(
            "record_observation",
            {"text": "a note", "observations": ["obs_" + "0" * 32], **MANUAL},
        )
    assert refused.is_error
    assert refused.data["error_code"] == "AUTHORITY_CONFLICT"
    (conflict,) = refused.data["details"]["conflicts"]
    assert conflict["existing"]["authority"] == {"rank": 3, "by": "method manual"}
    assert conflict["incoming"]["authority"] == {"rank": 1, "by": "method llm"}
    assert not knows.is_error, knows.data
    nodes = {n["merge_keys"]["name"]: n for n in opened.data["nodes"]}
    assert nodes["Ada"]["properties"]["city"] == "London"
    assert nodes["Ada"]["provenance"]["authority"] == {"rank": 3, "by": "method manual"}
    (edge,) = opened.data["edges"]
    assert edge["provenance"]["authority"] == {"rank": 1, "by": "method llm"}
    (triplet,) = answer.data["triplets"]
    assert triplet["provenance"]["authority"] == {"rank": 1, "by": "method llm"}
    assert lineage.is_error  # not an argument of the tool
    assert "observations" in str(lineage.data), lineage.data
