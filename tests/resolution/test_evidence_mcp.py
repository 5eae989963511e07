"""Evidence fields through MCP: an agent told its write probably duplicates a node reads,
field by field, what agreed, what disagreed and how much each weighed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import seed_document
from tests.server.conftest import published
from tests.server.harness import Served

pytestmark = pytest.mark.anyio


@pytest.fixture
def served(db_path: Path, tmp_path: Path) -> Iterator[Served]:
    document = seed_document()
    document["nodes"]["Person"]["resolution"] = {
        "policy": "auto",
        "evidence": {"born": {"compare": "date"}, "city": {"compare": "similar"}},
    }
    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump(document))
    s = Served("stdio", published(db_path, schema))
    yield s
    s.close()


async def test_a_possible_duplicate_lists_each_fields_contribution(served: Served) -> None:
    def person(name: str, born: str, city: str) -> dict[str, object]:
        return {"label": "Person", "merge_keys": {"name": name},
                "properties": {"born": born, "city": city},
                "source": "chat", "extraction_method": "llm"}  # fmt: skip

    async with served.agent("agent-1") as agent:
        assert not (
            await agent.call("write_node", person("Ada Lovelace", "1815-12-10", "London"))
        ).is_error
        namesake = await agent.call("write_node", person("ada lovelace", "1990-03-04", "London"))
    assert namesake.is_error
    assert namesake.data["error_code"] == "POSSIBLE_DUPLICATE"
    [candidate] = namesake.data["details"]["candidates"]
    said = {e["field"]: (e["outcome"], e["weight"] > 0) for e in candidate["evidence"]}
    assert said == {
        "name": ("agree", True),
        "born": ("disagree", False),
        "city": ("agree", True),
    }
    assert "born disagrees" in " ".join(candidate["reasons"])
    assert any("declared field that disagrees" in r for r in candidate["reasons"])
