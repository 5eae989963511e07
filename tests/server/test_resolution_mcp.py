"""Duplicates through MCP (issue 12): an agent is told which node its write probably
duplicates, with the score and the reasons, and may insist with ``resolution: "new"``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import seed_document
from tests.console import run as writegate_run
from tests.server.conftest import published
from tests.server.harness import Served

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest, db_path: Path, tmp_path: Path) -> Iterator[Served]:
    document = seed_document()
    document["nodes"]["Person"]["resolution"] = {"policy": "propose"}
    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump(document))
    s = Served(request.param, published(db_path, schema))
    yield s
    s.close()


async def test_a_probable_duplicate_is_named_and_new_is_honoured(served: Served) -> None:
    def person(name: str, **extra: object) -> dict[str, object]:
        return {"label": "Person", "merge_keys": {"name": name}, "source": "chat",
                "extraction_method": "llm", **extra}  # fmt: skip

    async with served.agent("agent-1") as agent:
        assert not (await agent.call("write_node", person("Ada Lovelace"))).is_error
        again = await agent.call("write_node", person("ada lovelace"))
        insisted = await agent.call("write_node", person("ada lovelace", resolution="new"))
    assert again.is_error
    assert again.data["error_code"] == "POSSIBLE_DUPLICATE"
    [candidate] = again.data["details"]["candidates"]
    assert candidate["merge_keys"] == {"name": "Ada Lovelace"}
    assert not insisted.is_error, insisted.data
    async with served.agent("auditor-1", roles=("auditor",)) as auditor:
        found = await auditor.call("audit_duplicates", {})
    assert (found.data["resolved"], found.data["proposed"]) == (0, 1)
    [proposal] = found.data["entries"]
    assert proposal["agent"] == "agent-1"
    assert 'Person{"name":"Ada Lovelace"}' in proposal["message"]
    listed = writegate_run(["--db", str(served.db), "audit", "duplicates", "--format", "json"])
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == found.data  # the CLI answers as the tool does


async def test_a_stub_a_relationship_would_create_is_resolved_too(served: Served) -> None:
    """merge_endpoints creates a node: the duplicate check applies to it (issue 12's hole)."""
    async with served.agent("agent-1") as agent:
        assert not (
            await agent.call(
                "write_node",
                {
                    "label": "Person",
                    "merge_keys": {"name": "Ada Lovelace"},
                    "source": "chat",
                    "extraction_method": "llm",
                },
            )
        ).is_error
        refused = await agent.call(
            "write_relationship",
            {"type": "WORKS_FOR", "from_label": "Person", "from_keys": {"name": "ada  lovelace"},
             "to_label": "Organization", "to_keys": {"name": "Analytical Engines"},
             "endpoint_policy": "merge_endpoints", "source": "chat", "extraction_method": "llm"},
        )  # fmt: skip
    assert refused.is_error
    assert refused.data["error_code"] == "POSSIBLE_DUPLICATE"
    assert refused.data["details"]["end"] == "from"
    [candidate] = refused.data["details"]["candidates"]
    assert candidate["merge_keys"] == {"name": "Ada Lovelace"}
