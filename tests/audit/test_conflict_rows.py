"""``audit conflicts`` rows of refused writes say what conflicted — the node, the property,
the agent, the value held and who held it — from the refusal's typed details as recorded,
like a supersession's rows (a refusal appends no event: the rejections table keeps them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.cli.conftest import as_json, writegate
from tests.conftest import FIXTURES
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult

HR: dict[str, Any] = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.95}
CHAT: dict[str, Any] = {"source": "chat", "extraction_method": "llm", "reliability": 0.5}
ADA = 'Person{"name":"Ada"}'


def refused_twice(db: Path) -> None:
    """email (conflict: reject) and role (keep_higher_confidence) each refuse a write."""
    with Gate.open(db, default_actor=Actor(agent="hr-bot")) as gate:
        document = yaml.safe_load((FIXTURES / "conflict_schema.yaml").read_text())
        assert gate.publish_schema(document).status == "published"
        ada: dict[str, Any] = {"label": "Person", "merge_keys": {"name": "Ada"}}
        held = gate.write_node(**ada, properties={"email": "ada@hr", "role": "engineer"}, **HR)
        assert isinstance(held, WriteNodeResult), held
        chat = Actor(agent="claude-code", session="s-1")
        for properties in ({"email": "ada@chat"}, {"role": "poet"}):
            refused = gate.write_node(**ada, properties=properties, actor=chat, **CHAT)
            assert isinstance(refused, Rejected), refused


def test_a_refused_write_names_the_node_property_agent_and_held_value(db_path: Path) -> None:
    refused_twice(db_path)
    found = as_json(db_path, "audit", "conflicts", "--format", "json")
    rows = [
        (e["subject"], e["property"], e["agent"], e["confidence"], e["held_value"], e["held_by"])
        for e in found["entries"]
        if e["outcome"] == "refused"
    ]
    assert rows == [
        (ADA, "email", "claude-code", 0.3, "ada@hr", "hr-bot"),
        (ADA, "role", "claude-code", 0.3, "engineer", "hr-bot"),
    ]

    table = writegate(db_path, "audit", "conflicts", env={"COLUMNS": "300"}).stdout
    assert f"{ADA}.email" in table
    assert "claude-code (0.3)" in table
    assert "ada@hr (hr-bot, 0.8075)" in table
    assert "()" not in table
