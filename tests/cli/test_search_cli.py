"""``writegate search`` shows a few of each match's relationships (``--neighbors``) and says,
in its table and its JSON, how many it leaves out."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import writegate
from tests.conftest import AGENT, SEED_SCHEMA, person
from tests.gate.test_search import knows
from writegate.gate import Gate


def test_a_match_says_how_many_relationships_are_not_shown(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db, default_actor=AGENT) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for name in ["Hub Quorra", *(f"Friend {i}" for i in range(5))]:
            gate.write_node(**person(name))
        for i in range(5):
            knows(gate, "Hub Quorra", f"Friend {i}")
    table = writegate(db, "search", "quorra", "--neighbors", "1", env={"COLUMNS": "300"}).stdout
    assert "Person:name=Hub Quorra (+4 relationships not shown)" in table, table
    found = json.loads(writegate(db, "search", "quorra", "--format", "json").stdout)
    assert [n.get("more_relationships") for n in found["nodes"]] == [3, None, None]
    assert len(found["edges"]) == 2
