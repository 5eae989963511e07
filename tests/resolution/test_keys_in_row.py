"""A node's resolution keys are listed in its own row, so its index rows are changed and
deleted by their keys: the index has no second index by node (one b-tree and one random
page a creating write fewer), on SQLite and PostgreSQL alike; a read model made before
is rebuilt with them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gate.test_resolution_gate import SCHEMA as RESOLVING
from writegate.eventlog import Actor
from writegate.gate import Gate, WriteNodeResult
from writegate.language import node_identity
from writegate.projections.state import StateProjection
from writegate.projections.state.tables import LAYOUT, LAYOUT_MARK

SCHEMA: dict[str, Any] = {"nodes": {"Person": RESOLVING["nodes"]["Person"]}}  # by name, email
CLAIM: dict[str, Any] = {"source": "test", "extraction_method": "manual"}


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=Actor(agent="a")) as g:
        assert g.publish_schema(SCHEMA).status == "published"
        yield g


def _write(gate: Gate, name: str, resolution: str | None = None, **properties: Any) -> str:
    out = gate.write_node(
        label="Person",
        merge_keys={"name": name},
        properties=properties,
        resolution=resolution,
        **CLAIM,
    )
    assert isinstance(out, WriteNodeResult), out
    return node_identity("Person", {"name": name})


def _delete(gate: Gate, name: str) -> None:
    out = gate.delete_node(label="Person", merge_keys={"name": name}, **CLAIM)
    assert out.status == "deleted", out


def _indexed(gate: Gate) -> dict[str, list[str]]:
    """The index's rows, by node."""
    with gate.log.snapshot() as conn:
        rows = conn.execute("SELECT key, identity FROM state_resolution_keys ORDER BY key")
        found: dict[str, list[str]] = {}
        for key, identity in rows.fetchall():
            found.setdefault(str(identity), []).append(str(key))
    return found


def _listed(gate: Gate, identity: str) -> list[str]:
    with gate.log.snapshot() as conn:
        return StateProjection().resolution_keys_of(conn, identity)


def test_a_nodes_row_lists_the_keys_the_index_holds_as_they_change(gate: Gate) -> None:
    ada = _write(gate, "Ada Lovelace")
    _write(gate, "Grace Hopper", email="grace@navy.mil")
    first = _indexed(gate)[ada]
    assert _listed(gate, ada) == first
    assert len(first) == 2  # her two name rows
    _write(gate, "Ada Lovelace", email="ada@analytical.org")  # an identity key joins them
    joined = sorted([*first, "Person/id:email=ada@analytical.org"])
    assert _listed(gate, ada) == _indexed(gate)[ada] == joined
    _write(gate, "Ada Lovelace", "same", email="countess@analytical.org")  # and is replaced
    now = _indexed(gate)[ada]
    assert _listed(gate, ada) == now
    assert "Person/id:email=countess@analytical.org" in now
    assert "Person/id:email=ada@analytical.org" not in now
    _delete(gate, "Ada Lovelace")
    assert ada not in _indexed(gate)
    assert _listed(gate, ada) == []
    assert len(_indexed(gate)) == 1  # Grace's stay
    with gate.log.snapshot() as conn:
        assert StateProjection().equals_replay(gate.log, conn)


def test_the_index_has_no_second_index_and_changes_its_rows_by_their_keys(
    tmp_path: Path,
) -> None:
    with Gate.open(tmp_path / "log.db", default_actor=Actor(agent="a")) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        _write(gate, "Ada Lovelace", email="ada@analytical.org")
        conn = gate.log.connection()
        assert isinstance(conn, sqlite3.Connection)
        indexes = conn.execute("PRAGMA index_list(state_resolution_keys)").fetchall()
        assert [row[3] for row in indexes] == ["pk"]  # its primary key alone
        said: list[str] = []
        conn.set_trace_callback(said.append)
        _write(gate, "Ada Lovelace", "same", email="countess@analytical.org")
        _delete(gate, "Ada Lovelace")
        conn.set_trace_callback(None)
        touching = [s for s in said if "state_resolution_keys" in s and "INSERT" not in s]
        assert any(s.startswith("DELETE") for s in touching)  # the test can fail
        for statement in touching:
            plan = " ".join(str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}"))
            assert "PRIMARY KEY" in plan, (statement, plan)
            assert "SCAN" not in plan, (statement, plan)


def test_a_read_model_made_before_is_rebuilt_with_each_nodes_keys(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    with Gate.open(path, default_actor=Actor(agent="a")) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        ada = _write(gate, "Ada Lovelace", email="ada@analytical.org")
        kept = _indexed(gate)[ada]
    old = sqlite3.connect(path, isolation_level=None)  # as layout 18 left it
    old.execute("ALTER TABLE state_nodes DROP COLUMN unsearchable")  # (layout 20's)
    old.execute("ALTER TABLE state_nodes DROP COLUMN resolution_keys")
    old.execute("CREATE INDEX state_resolution_keys_identity ON state_resolution_keys (identity)")
    old.execute("UPDATE projection_checkpoints SET seq = 18 WHERE name = ?", (LAYOUT_MARK,))
    old.close()
    with Gate.open(path, default_actor=Actor(agent="a")) as gate:
        assert _listed(gate, ada) == _indexed(gate)[ada] == kept
        with gate.log.snapshot() as conn:
            assert StateProjection().layout(conn) == LAYOUT
            assert StateProjection().equals_replay(gate.log, conn)
        refused = gate.write_node(label="Person", merge_keys={"name": "Ada Lovelac"}, **CLAIM)
        assert refused.status == "rejected"  # the rebuilt index still meets her
