"""A walk's step on SQLite and PostgreSQL: each node's first ``cap`` relationships in
identity order, both directions, one statement for the whole frontier — the same answer a
node-by-node read gives, and the flag that a hub had more."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.language import node_identity, relationship_identity
from writegate.projections.state import StateProjection
from writegate.projections.state.scoped import ScopedState

SCHEMA = ROOT / "fixtures" / "conflict_schema.yaml"


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


def who(name: str) -> str:
    return node_identity("Person", {"name": name})


def knows(gate: Gate, a: str, b: str) -> None:
    written = gate.write_relationship(
        type="KNOWS",
        from_label="Person",
        from_keys={"name": a},
        to_label="Person",
        to_keys={"name": b},
        source="chat",
        extraction_method="llm",
        reliability=0.8,
        endpoint_policy="merge_endpoints",
    )
    assert written.status == "written", written


@pytest.fixture
def gate(db_path: str | Path) -> Gate:
    gate = Gate.open(db_path, default_actor=Actor(agent="walker"))
    gate.publish_schema(SCHEMA)
    for friend in ("Bea", "Cy", "Di", "Ed"):  # Ann is a hub: four out, one in
        knows(gate, "Ann", friend)
    knows(gate, "Fay", "Ann")
    knows(gate, "Bea", "Cy")
    return gate


def test_each_node_gets_its_first_relationships_in_identity_order_both_ways(gate: Gate) -> None:
    state = StateProjection()
    with gate, gate.log.snapshot() as conn:
        step, more = state.links_touching(conn, [who("Ann"), who("Cy"), who("Nobody")], None, 10)
    assert more is False
    ann = [attached.identity for attached, _ in step[who("Ann")]]
    expected = sorted(
        [relationship_identity("KNOWS", who("Ann"), who(f)) for f in ("Bea", "Cy", "Di", "Ed")]
        + [relationship_identity("KNOWS", who("Fay"), who("Ann"))]
    )
    assert ann == expected
    cy = {(a.from_identity, a.to_identity) for a, _ in step[who("Cy")]}
    assert cy == {(who("Ann"), who("Cy")), (who("Bea"), who("Cy"))}
    assert step[who("Nobody")] == []
    assert all(seq > 0 for _, seq in step[who("Ann")])


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
