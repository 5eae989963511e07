"""The relationships around a page of nodes on SQLite and PostgreSQL: the answer a
node-by-node read gives (each node's outgoing, then incoming, in identity order, each
once, cut at the cap with a flag), read in two statements however many nodes are asked."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import pytest

from tests.projections.hub import SCHEMA, hub, knows, who
from writegate.eventlog import Actor
from writegate.eventlog.sql import Sql
from writegate.gate import Gate
from writegate.projections.state import StateProjection
from writegate.projections.state.scoped import ScopedState

PEOPLE = ("Ann", "Bea", "Cy", "Di", "Ed", "Fay")


@pytest.fixture
def gate(any_db: str | Path) -> Gate:
    gate = hub(Gate.open(any_db, default_actor=Actor(agent="reader")))
    knows(gate, "Cy", "Bea")
    return gate


def node_by_node(conn: Sql, identities: list[str], cap: int) -> tuple[list[str], bool]:
    """The reference: one read per node and direction, stopping past the cap."""
    seen: dict[str, None] = {}
    for identity in identities:
        for column in ("from_identity", "to_identity"):
            rows = conn.execute(
                f"SELECT identity FROM state_relationships WHERE {column} = ? "
                "ORDER BY identity LIMIT ?",
                (identity, cap + 1),
            ).fetchall()
            for (found,) in rows:
                seen.setdefault(found)
                if len(seen) > cap:
                    return list(seen)[:cap], True
    return list(seen), False


@pytest.mark.parametrize("cap", [1, 2, 3, 5, 100])
def test_the_relationships_around_nodes_come_as_a_node_by_node_read_gives(
    gate: Gate, cap: int
) -> None:
    asked = [who(name) for name in ("Cy", "Ann", "Nobody", "Bea", "Cy")]
    state = StateProjection()
    with gate, gate.log.snapshot() as conn:
        rows, more = state.edges_touching(conn, asked, None, cap)
        expected = node_by_node(conn, asked, cap)
    assert ([row.identity for row in rows], more) == expected
    assert all(row.type == "KNOWS" and row.provenance is not None for row in rows)


def test_a_type_filter_and_a_grant_of_nothing_hold_around_nodes(gate: Gate) -> None:
    with gate, gate.log.snapshot() as conn:
        typed = StateProjection().edges_touching(conn, [who("Ann")], "WORKS_FOR", 10)
        blind = ScopedState(frozenset()).edges_touching(conn, [who("Ann")], None, 10)
        seen = ScopedState(frozenset({"default"})).edges_touching(conn, [who("Ann")], None, 10)
        every = StateProjection().edges_touching(conn, [who("Ann")], None, 10)
    assert typed == ([], False)
    assert blind == ([], False)
    assert seen == every
    assert len(every[0]) == 5


def test_a_search_reads_its_page_s_relationships_in_two_statements(tmp_path: Path) -> None:
    """Not one a node and direction: a page of 25 cost 50 round trips at 1M people."""
    with Gate.open(tmp_path / "log.db", default_actor=Actor(agent="reader")) as gate:
        gate.publish_schema(SCHEMA)
        for a, b in itertools.pairwise(PEOPLE):
            knows(gate, a, b)
        conn = gate.log.connection()
        assert isinstance(conn, sqlite3.Connection)
        said: list[str] = []
        conn.set_trace_callback(said.append)
        found = gate.reader().search_nodes(" ".join(PEOPLE))
        conn.set_trace_callback(None)
        order, rows = [sql for sql in said if "FROM state_relationships" in sql]
        plan = [step[3] for step in conn.execute(f"EXPLAIN QUERY PLAN {order}")]
        kept = [step[3] for step in conn.execute(f"EXPLAIN QUERY PLAN {rows}")]
    assert {node.merge_keys["name"] for node in found.nodes} == set(PEOPLE)
    assert len(found.edges) == len(PEOPLE) - 1
    searches = [step for step in plan if step.startswith("SEARCH")]
    assert len(searches) == 4, plan  # two directions: the node's entries, then the bound
    assert all("USING COVERING INDEX state_rel_" in step for step in searches), plan
    assert all("INDEX sqlite_autoindex_state_relationships_1 (identity=?)" in k for k in kept), kept
