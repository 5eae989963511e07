"""On SQLite a node's document is its own state row (``projections.state.nodetext``): the
write puts its text there and FTS5 follows the row. A read model of the layout before is
made again in place by a writer's open, searching as it did, and verifies."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tests.conftest import AGENT
from tests.projections.node_text_layout import layout_20
from writegate.gate import Gate, WriteNodeResult
from writegate.projections.search import SqliteTextIndex
from writegate.projections.state.tables import LAYOUT, LAYOUT_MARK

CLAIM: dict[str, Any] = {"source": "crm.csv", "extraction_method": "parsed"}
SCHEMA: dict[str, Any] = {
    "nodes": {
        "Person": {
            "merge_keys": ["name"],
            "properties": {
                "name": {"type": "string"},
                "role": {"type": "string"},
                "born": {"type": "integer"},
            },
        }
    }
}
MADE = [
    'Person{"name":"Grace Hopper"}',
    'Person{"name":"Ada Lovelace"}',
    'Person{"name":"Alan Turing"}',
]
QUESTIONS = ("ada", "lovelace engineer", "analytical engine", "turing", "Person", "bletchley")


def people(gate: Gate) -> None:
    assert gate.publish_schema(SCHEMA).status == "published"
    for name, role in (  # made in an order other than their identities'
        ("Grace Hopper", "engineer"),
        ("Ada Lovelace", "engineer of the analytical engine"),
        ("Alan Turing", "codebreaker at Bletchley"),
    ):
        out = gate.write_node(
            label="Person", merge_keys={"name": name}, properties={"role": role}, **CLAIM
        )
        assert isinstance(out, WriteNodeResult), out
    out = gate.write_node(
        label="Person", merge_keys={"name": "Ada Lovelace"}, properties={"born": 1815}, **CLAIM
    )
    assert isinstance(out, WriteNodeResult), out


def answers(gate: Gate) -> list[list[str]]:
    reader = gate.reader()
    return [
        [n.merge_keys["name"] for n in reader.search_nodes(q, neighbors=0).nodes] for q in QUESTIONS
    ]


def test_a_write_puts_the_text_in_the_row_and_nothing_in_the_documents_table(
    tmp_path: Path,
) -> None:
    with Gate.open(tmp_path / "log.db", default_actor=AGENT) as gate:
        people(gate)
        conn = gate.log.connection()
        rows = conn.execute("SELECT identity, text FROM state_nodes ORDER BY document").fetchall()
        assert [identity for identity, _ in rows] == MADE  # numbered as they were made
        assert rows[1][1] == "Person\nAda Lovelace\nengineer of the analytical engine"
        kinds = conn.execute("SELECT DISTINCT kind FROM search_documents").fetchall()
        assert ("node",) not in kinds
        assert SqliteTextIndex().intact(conn)
        assert answers(gate)[0] == ["Ada Lovelace"]
        assert gate.verify().ok


def test_a_read_model_of_the_layout_before_is_made_again_in_place(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    with Gate.open(path, default_actor=AGENT) as gate:
        people(gate)
        before = answers(gate)
    layout_20(path)
    with Gate.open(path, readonly=True) as gate:  # read as it is
        assert answers(gate) == before
        assert gate.verify().ok
    old = sqlite3.connect(path)
    by = old.execute("SELECT updated_by, identity FROM state_nodes").fetchall()
    old.execute("UPDATE state_nodes SET updated_by = 'marked'")  # a replay would undo it
    old.commit()
    old.close()
    with Gate.open(path, default_actor=AGENT) as gate:  # a writer's open: made again
        conn = gate.log.connection()
        assert conn.execute("SELECT DISTINCT updated_by FROM state_nodes").fetchall() == [
            ("marked",)
        ]
        layout = "SELECT seq FROM projection_checkpoints WHERE name = ?"
        assert conn.execute(layout, (LAYOUT_MARK,)).fetchone() == (LAYOUT,)
        made = "SELECT identity FROM state_nodes ORDER BY document"
        assert [row[0] for row in conn.execute(made)] == MADE
        kinds = conn.execute("SELECT DISTINCT kind FROM search_documents").fetchall()
        assert ("node",) not in kinds
        assert SqliteTextIndex().intact(conn)
        conn.executemany("UPDATE state_nodes SET updated_by = ? WHERE identity = ?", by)
        assert answers(gate) == before
        out = gate.write_node(
            label="Person",
            merge_keys={"name": "Alan Turing"},
            properties={"role": "logician"},
            **CLAIM,
        )
        assert isinstance(out, WriteNodeResult), out
        assert answers(gate)[3] == ["Alan Turing"]
        assert answers(gate)[5] == []  # his old words left the index with his old text
        assert gate.verify().ok
