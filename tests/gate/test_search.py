"""search_nodes goes through the read model's text index, on SQLite and on PostgreSQL:
ranked by relevance, paged, current with every write, and built for a log from before it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import AGENT, SEED_SCHEMA, person
from tests.projections.node_text_layout import layout_20
from writegate.gate import Gate, GateRejection
from writegate.gate.reads.around import NEIGHBORS
from writegate.gate.reads.reader import GraphReader
from writegate.projections.search.bm25 import KINDS
from writegate.projections.state.tables import TEXT_LAYOUT


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db


def found(gate: Gate, query: str, limit: int = 25) -> list[str]:
    page = GraphReader(gate.log, gate.state).search_nodes(query, limit)
    return [n.merge_keys["name"] for n in page.nodes if n.label == "Person"][:limit]


def test_the_node_with_more_of_the_words_ranks_first(gate: Gate) -> None:
    for name in ("Bob Smith", "Alice Jones", "Alice Smith", "Carol Alison"):
        gate.write_node(**person(name))
    assert found(gate, "alice smith", 1) == ["Alice Smith"]
    assert found(gate, "where is Alice Smith?")[:1] == ["Alice Smith"]
    assert set(found(gate, "ali")) == {"Alice Jones", "Alice Smith", "Carol Alison"}


def test_a_search_pages_with_its_cursor(gate: Gate) -> None:
    names = [f"Dana {i}" for i in range(7)]
    for name in names:
        gate.write_node(**person(name))
    reader = GraphReader(gate.log, gate.state)
    seen: list[str] = []
    cursor = None
    while True:
        page = reader.search_nodes("dana", 3, cursor)
        seen += [n.merge_keys["name"] for n in page.nodes]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert sorted(seen) == sorted(names)
    with pytest.raises(GateRejection) as refused:
        reader.search_nodes("dana", 3, "Person{}")
    assert refused.value.code.value == "INVALID_ARGUMENT"


def test_a_deleted_node_is_no_longer_found(gate: Gate) -> None:
    gate.write_node(**person("Erin Quill"))
    assert found(gate, "quill") == ["Erin Quill"]
    gate.delete_node(
        label="Person", merge_keys={"name": "Erin Quill"}, source="test", extraction_method="manual"
    )
    assert found(gate, "quill") == []


def test_a_log_from_before_the_index_is_indexed_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Gate.open(path, default_actor=AGENT) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(**person("Frank Older"))
    layout_20(path)  # node rows without their text
    conn = sqlite3.connect(path, isolation_level=None)  # as the layout before the index left it
    for kind in KINDS:
        conn.execute(f"DROP TABLE search_fts_{kind}")
        conn.execute(f"DROP VIEW search_documents_{kind}")
    conn.execute("DROP TABLE search_documents")
    conn.execute(
        "UPDATE projection_checkpoints SET seq = ? WHERE name = 'state.layout'", (TEXT_LAYOUT - 1,)
    )
    conn.close()
    with Gate.open(path, readonly=True) as copy:  # a read-only copy is searched as before
        assert found(copy, "rank old") == ["Frank Older"]
    with Gate.open(path) as gate:
        assert found(gate, "older") == ["Frank Older"]
        assert gate.state.equals_replay(gate.log, gate.log.connection())


def test_views_built_from_rows_are_what_validation_makes_of_them(gate: Gate) -> None:
    """Views are built from the read model's rows without validating them again: each must
    be exactly the model validation makes of its own dump (types, defaults, aliases)."""
    said = gate.record_observation(text="Ada met Alan", source="notes", extraction_method="llm")
    assert said.status == "recorded"
    for name in ("Ada Byron", "Alan Turing"):
        gate.write_node(**person(name, observations=[said.observation_id]))
    gate.write_node(**person("Ada Byron", source="registry", extraction_method="api"))
    written = gate.write_relationship(
        type="KNOWS",
        from_label="Person",
        from_keys={"name": "Ada Byron"},
        to_label="Person",
        to_keys={"name": "Alan Turing"},
        source="notes",
        extraction_method="llm",
    )
    assert written.status == "written"
    page = GraphReader(gate.log, gate.state).search_nodes("ada", 5)
    assert page.edges
    assert any(n.provenance.sources for n in page.nodes)
    assert any(n.provenance.observations for n in page.nodes)
    for view in [*page.nodes, *page.edges]:
        again = type(view).model_validate(view.model_dump())
        assert again == view
        assert again.model_dump(mode="json", by_alias=True) == view.model_dump(
            mode="json", by_alias=True
        )


def knows(gate: Gate, one: str, other: str) -> None:
    written = gate.write_relationship(
        type="KNOWS",
        from_label="Person",
        from_keys={"name": one},
        to_label="Person",
        to_keys={"name": other},
        source="test",
        extraction_method="manual",
    )
    assert written.status == "written", written


def test_a_match_shows_a_few_relationships_and_counts_the_rest(gate: Gate) -> None:
    for name in ["Hub Quorra", *(f"Friend {i}" for i in range(6))]:
        gate.write_node(**person(name))
    for i in range(4):
        knows(gate, "Hub Quorra", f"Friend {i}")
    knows(gate, "Friend 4", "Hub Quorra")
    knows(gate, "Hub Quorra", "Hub Quorra")  # a loop: one relationship
    reader = GraphReader(gate.log, gate.state)

    def asked(neighbors: int) -> tuple[int | None, int, int]:
        page = reader.search_nodes("quorra", neighbors=neighbors)
        hub = page.nodes[0]
        assert hub.merge_keys == {"name": "Hub Quorra"}
        assert all(n.more_relationships is None for n in page.nodes[1:])  # neighbours
        return hub.more_relationships, len(page.edges), len(page.nodes)

    assert asked(3) == (3, 3, 4)  # outgoing first, in identity order: Friend 0 to 2
    assert asked(0) == (6, 0, 1)
    assert asked(6) == (0, 6, 6)  # the loop brings no other node
    assert asked(100) == (0, 6, 6)
    default = reader.search_nodes("quorra")
    assert default == reader.search_nodes("quorra", neighbors=NEIGHBORS)
    assert "more_relationships" not in default.nodes[1].model_dump()
    with pytest.raises(GateRejection) as refused:
        reader.search_nodes("quorra", neighbors=-1)
    assert refused.value.details == {"field": "neighbors"}


def test_matches_linked_to_each_other_count_what_neither_shows(gate: Gate) -> None:
    for name in ("Ann Zephyr", "Bo Zephyr", "Cy Other"):
        gate.write_node(**person(name))
    knows(gate, "Ann Zephyr", "Bo Zephyr")
    knows(gate, "Ann Zephyr", "Cy Other")
    knows(gate, "Bo Zephyr", "Cy Other")
    page = GraphReader(gate.log, gate.state).search_nodes("zephyr", neighbors=1)
    more = {n.merge_keys["name"]: n.more_relationships for n in page.nodes}
    # Ann's first (to Bo) is one of Bo's too: a relationship shown counts for both its ends
    shown = {(e.from_node.merge_keys["name"], e.to_node.merge_keys["name"]) for e in page.edges}
    assert shown == {("Ann Zephyr", "Bo Zephyr"), ("Bo Zephyr", "Cy Other")}
    assert more == {"Ann Zephyr": 1, "Bo Zephyr": 0, "Cy Other": None}


def test_an_open_that_remakes_the_index_leaves_appends_a_fresh_connection(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Gate.open(path, default_actor=AGENT) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(**person("Gil Remade"))
    conn = sqlite3.connect(path, isolation_level=None)  # the node table in another layout
    conn.execute("DROP TABLE search_fts_node")
    conn.execute(
        "CREATE VIRTUAL TABLE search_fts_node USING fts5 (text, content = "
        "'search_documents_node', content_rowid = 'rowid', columnsize = 0)"
    )
    conn.close()
    with Gate.open(path, default_actor=AGENT) as gate:
        # the connection that made it again wrote every later index entry ~10% slower
        appending = gate.log.connection()
        assert isinstance(appending, sqlite3.Connection)
        assert appending.total_changes == 0
        assert found(gate, "remade") == ["Gil Remade"]
        gate.write_node(**person("Hal Remade"))
        assert found(gate, "remade") == ["Gil Remade", "Hal Remade"]
