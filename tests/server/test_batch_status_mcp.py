"""A write tool's status is what happened (issue 41, defect 2): ``add_<label>`` on a label
under review answers ``proposed``, not ``written``; a batch says what each of its items
did, counted by outcome, and ``mixed`` when they did different things."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.server.conftest import ALL_TOOLS, NPC_SCHEMA, published
from tests.server.harness import Served

pytestmark = pytest.mark.anyio
MANUAL = {"source": "campaign-notes.md", "extraction_method": "manual", "reliability": 0.9}
GUESS = {"source": "chat", "extraction_method": "llm", "reliability": 0.5}


@pytest.fixture
def served(db_path: Path, tmp_path: Path) -> Iterator[Served]:
    """Seed 001's NPC schema, NPCs held for review below confidence 0.5."""
    document: dict[str, Any] = yaml.safe_load(NPC_SCHEMA.read_text())
    document["nodes"]["Npc"]["review_below"] = 0.5
    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump(document))
    s = Served("stdio", published(db_path, schema), ALL_TOOLS)
    yield s
    s.close()


def _npc(name: str, claim: dict[str, Any]) -> dict[str, Any]:
    entity = {"name": name, "role": "Wizard", "status": "Active"}
    return {"op": "write_node", "label": "Npc", "merge_keys": {"name": name},
            "properties": entity, **claim}  # fmt: skip


async def test_a_per_label_add_held_for_review_answers_proposed(served: Served) -> None:
    async with served.agent() as agent:
        entity = {"name": "Gandalf", "role": "Wizard", "status": "Active"}
        held = await agent.call("add_npc", {"npc": entity, **GUESS})
    assert not held.is_error, held.data
    assert held.data["status"] == "proposed"
    assert held.data["outcomes"] == {"proposed": 1}
    assert [r["status"] for r in held.data["results"]] == ["proposed"]


async def test_a_batch_counts_its_items_by_outcome(served: Served) -> None:
    async with served.agent() as agent:
        written = await agent.call("write_batch", {"items": [_npc("Frodo", MANUAL)]})
        assert written.data["status"] == "written", written.data
        mixed = await agent.call(
            "write_batch", {"items": [_npc("Sam", MANUAL), _npc("Gollum", GUESS)]}
        )
        again = await agent.call("write_batch", {"items": [_npc("Frodo", MANUAL)]})
    assert mixed.data["status"] == "mixed", mixed.data
    assert mixed.data["outcomes"] == {"written": 1, "proposed": 1}
    assert again.data["status"] == "unchanged", again.data
    assert again.data["outcomes"] == {"unchanged": 1}
