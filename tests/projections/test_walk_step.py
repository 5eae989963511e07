"""A walk's step on SQLite and PostgreSQL: each node's first ``cap`` relationships in
identity order, both directions, one statement for the whole frontier — the same answer a
node-by-node read gives, and the flag that a hub had more."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.projections.hub import hub, who
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.language import relationship_identity
from writegate.projections.state import StateProjection
from writegate.projections.state.scoped import ScopedState


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


@pytest.fixture
def gate(db_path: str | Path) -> Gate:
    gate = hub(Gate.open(db_path, default_actor=Actor(agent="walker")))
    return gate


def test_each_node_gets_its_first_relationships_in_identity_order_both_ways(gate: Gate) -> None:
    state = StateProjection()
    with gate, gate.log.snapshot() as conn:
        step, more = state.links_touching(conn, [who("Ann"), who("Cy"), who("Nobody")], None, 10)
    assert more is False
    ann = [attached.identity for attached in step[who("Ann")]]
    expected = sorted(
        [relationship_identity("KNOWS", who("Ann"), who(f)) for f in ("Bea", "Cy", "Di", "Ed")]
        + [relationship_identity("KNOWS", who("Fay"), who("Ann"))]
    )
    assert ann == expected
    cy = {(a.from_identity, a.to_identity) for a in step[who("Cy")]}
    assert cy == {(who("Ann"), who("Cy")), (who("Bea"), who("Cy"))}
    assert step[who("Nobody")] == []


def test_the_write_that_last_set_each_relationship_is_asked_of_those_kept(gate: Gate) -> None:
    last = {
        e.payload["identity"]: e.seq for e in gate.log.iter_events(types=["relationship.written"])
    }
    state = StateProjection()
    with gate, gate.log.snapshot() as conn:
        asked = [*list(last)[:3], "(nobody)-[KNOWS]->(nowhere)"]
        assert state.last_writes(conn, asked) == {i: last[i] for i in asked[:3]}


def test_a_step_on_sqlite_reads_indexes_alone(tmp_path: Path) -> None:
    """The table's rows carry properties and provenance, scattered over the file: a step
    reads what it needs from the two walk indexes, never a row."""
    with Gate.open(tmp_path / "log.db") as gate, gate.log.snapshot() as conn:
        assert isinstance(conn, sqlite3.Connection)
        asked: list[str] = []
        conn.set_trace_callback(asked.append)
        StateProjection().links_touching(conn, [who("Ann")], None, 10)
        conn.set_trace_callback(None)
        (sql,) = [q for q in asked if "state_relationships" in q]
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
    searches = [step for step in plan if step.startswith("SEARCH")]
    assert len(searches) == 4, plan
    assert all("USING COVERING INDEX state_rel_" in step for step in searches), plan


def test_a_hub_is_cut_at_the_cap_and_the_step_says_so(gate: Gate) -> None:
    state = StateProjection()
    with gate, gate.log.snapshot() as conn:
        whole, _ = state.links_touching(conn, [who("Ann")], None, 10)
        cut, more = state.links_touching(conn, [who("Ann"), who("Ed")], None, 2)
    assert more is True
    assert cut[who("Ann")] == whole[who("Ann")][:2]
    assert len(cut[who("Ed")]) == 1


def test_a_type_filter_and_a_grant_of_nothing_bound_the_step(gate: Gate) -> None:
    with gate, gate.log.snapshot() as conn:
        typed, _ = StateProjection().links_touching(conn, [who("Ann")], "WORKS_FOR", 10)
        blind, more = ScopedState(frozenset()).links_touching(conn, [who("Ann")], None, 10)
    assert typed[who("Ann")] == []
    assert blind == {who("Ann"): []}
    assert more is False
