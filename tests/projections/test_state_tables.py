"""The state read model's tables are named once (``STATE_TABLES``, by primary key): the DDL
creates exactly those, keyed as said, and the current layout has them all."""

from __future__ import annotations

import sqlite3

import pytest

from writegate.eventlog.sql import run_script
from writegate.projections.state import StateProjection
from writegate.projections.state.tables import (
    LAYOUT,
    NODES,
    NODES_WITH_TEXT,
    STATE_TABLES,
    TABLES,
    layout_tables,
)


def _keys(conn: sqlite3.Connection, table: str) -> list[tuple[str, ...]]:
    """The table's primary key and the columns of each of its unique indexes."""
    info = conn.execute(f"PRAGMA table_info({table})").fetchall()
    keys = [tuple(row[1] for row in sorted(info, key=lambda r: r[5]) if row[5])]
    for index in conn.execute(f"PRAGMA index_list({table})").fetchall():
        if index[2]:  # unique
            found = conn.execute(f"PRAGMA index_info({index[1]})").fetchall()
            keys.append(tuple(row[2] for row in found))
    return keys


@pytest.mark.parametrize(
    "nodes", [NODES, NODES_WITH_TEXT.replace("{table}", "state_nodes")], ids=["kept", "in rows"]
)
def test_the_tables_are_those_the_ddl_creates_keyed_as_it_says(nodes: str) -> None:
    conn = sqlite3.connect(":memory:")
    run_script(conn, TABLES + nodes)
    created = [
        name
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if name != "projection_checkpoints"
    ]
    assert sorted(created) == sorted(STATE_TABLES)
    for table, key in STATE_TABLES.items():
        assert key in _keys(conn, table)
    conn.close()


def test_a_layout_has_the_tables_of_the_last_layout_adding_any() -> None:
    assert sorted(layout_tables(LAYOUT)) == sorted(STATE_TABLES)
    assert layout_tables(2) == ("state_facts", "state_nodes", "state_relationships")
    assert layout_tables(LAYOUT + 1) == layout_tables(LAYOUT)  # a newer file: all it can


def test_a_read_model_from_before_the_review_lane_keeps_no_reviews() -> None:
    state = StateProjection()
    conn = sqlite3.connect(":memory:", isolation_level=None)
    state.install(conn)
    assert state.keeps_reviews(conn)
    conn.execute("UPDATE projection_checkpoints SET seq = 2 WHERE name = 'state.layout'")
    assert not state.keeps_reviews(conn)  # a read-only copy of layout 2 is read as it is
    conn.close()


def test_asking_for_corroborations_probes_their_own_index_not_every_writes_row() -> None:
    """Every write keeps a support row and few facts are corroborated: a read asking each
    fact it shows for its corroborations must probe an index of those alone."""
    state = StateProjection()
    conn = sqlite3.connect(":memory:", isolation_level=None)
    state.install(conn)
    asked: list[str] = []
    conn.set_trace_callback(asked.append)
    state.corroborations(conn, ['Person{"name":"Ada"}', 'Person{"name":"Alan"}'])
    conn.set_trace_callback(None)
    (query,) = [sql for sql in asked if "state_support" in sql]
    plan = " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}"))
    assert "USING INDEX state_support_corroborated" in plan, plan
    conn.close()
