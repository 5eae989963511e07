"""Feedback on an answer (graph_improve): the weights of the facts it used move by an EMA
toward the outcome's target, once per answer, and a replay of the log reproduces them —
on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT, SEED_SCHEMA, person, relationship, state_of
from writegate.eventlog import Actor
from writegate.gate import EdgeKey, FeedbackSettings, Gate, ImproveResult, Rejected, dump
from writegate.gate.audit.feedback import feedback_trail
from writegate.gate.feedback import Improvements
from writegate.language import FeedbackGiven, payload_of
from writegate.projections.state import StateProjection, feedback_weights, rank_factor
from writegate.projections.state.tables import FEEDBACK_LAYOUT

ALICE = 'Person{"name":"Alice"}'
BOB = 'Person{"name":"Bob"}'
KNOWS = f"({ALICE})-[KNOWS]->({BOB})"
EDGE = EdgeKey(sourceId=ALICE, targetId=BOB, relationshipName="KNOWS")


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db


@pytest.fixture
def graph(gate: Gate) -> Gate:
    """Alice -KNOWS-> Bob."""
    gate.write_node(**person("Alice"))
    gate.write_node(**person("Bob"))
    gate.write_relationship(**relationship())
    return gate


def weights(gate: Gate, *identities: str) -> dict[str, float]:
    return feedback_weights(gate.log.connection(), identities)


def improve(gate: Gate, session: str, outcome: Any, **used: Any) -> ImproveResult:
    result = gate.graph_improve(session_id=session, outcome=outcome, **used)
    assert isinstance(result, ImproveResult), result
    return result


def test_weights_follow_the_hand_computed_moving_average(graph: Gate) -> None:
    assert weights(graph, ALICE, KNOWS) == {ALICE: 0.5, KNOWS: 0.5}  # nobody rated them
    first = improve(graph, "s-1", "accepted", used_node_ids=[ALICE], used_edge_keys=[EDGE])
    assert (first.status, first.node_updates, first.edge_updates) == ("applied", 1, 1)
    assert weights(graph, ALICE, KNOWS) == pytest.approx({ALICE: 0.65, KNOWS: 0.65})
    improve(graph, "s-2", "rejected", used_node_ids=[ALICE])  # 0.65 + 0.3 * (0 - 0.65)
    improve(graph, "s-3", "rework", used_node_ids=[ALICE], used_edge_keys=[EDGE])
    # Alice: 0.455 + 0.3 * (0.5 - 0.455); KNOWS: 0.65 + 0.3 * (0.5 - 0.65)
    assert weights(graph, ALICE, KNOWS, BOB) == pytest.approx(
        {ALICE: 0.4685, KNOWS: 0.605, BOB: 0.5}
    )


def test_alpha_is_a_setting_and_each_event_keeps_its_own(graph: Gate, db_path: Path) -> None:
    improve(graph, "s-1", "accepted", used_node_ids=[ALICE])  # at the default 0.3: 0.65
    graph.close()
    with Gate.open(db_path, default_actor=AGENT, feedback=FeedbackSettings(alpha=0.5)) as gate:
        improve(gate, "s-2", "accepted", used_node_ids=[ALICE])  # 0.65 + 0.5 * 0.35
        assert weights(gate, ALICE) == pytest.approx({ALICE: 0.825})
        alphas = [p.alpha for p in _feedback(gate)]
        assert alphas == [0.3, 0.5]
        # a replay under yet another setting reproduces them: the rate is in each event
        assert gate.state.equals_replay(gate.log, gate.log.connection())
        replayed = gate.state.rebuilt_snapshot(gate.log)["state_feedback"]
        assert [row[0] for row in replayed] == [ALICE]
        assert replayed[0][1] == pytest.approx(0.825)


def test_a_replay_reproduces_every_weight(graph: Gate) -> None:
    outcomes = ["accepted", "rejected", "rework", "accepted", "accepted", "rejected"]
    for n, outcome in enumerate(outcomes):
        used = [ALICE, BOB] if n % 2 else [ALICE]
        improve(graph, f"s-{n}", outcome, used_node_ids=used, used_edge_keys=[EDGE])
    conn = graph.log.connection()
    live = graph.state.snapshot(conn)["state_feedback"]
    assert live == graph.state.rebuilt_snapshot(graph.log)["state_feedback"]
    assert graph.state.equals_replay(graph.log, conn)
    assert graph.verify().ok
    # the audit folds the same events by the same rule: its last weights are the read model's
    trail = feedback_trail(graph.log)
    assert trail.weights == weights(graph, ALICE, BOB, KNOWS)
    assert [(row[0], row[2]) for row in live] == [(KNOWS, 6), (ALICE, 6), (BOB, 3)]


def test_the_same_feedback_twice_changes_nothing_and_appends_nothing(graph: Gate) -> None:
    first = improve(graph, "s-1", "accepted", used_node_ids=[ALICE, BOB], used_edge_keys=[EDGE])
    before = state_of(graph)
    again = improve(graph, "s-1", "accepted", used_node_ids=[BOB, ALICE], used_edge_keys=[EDGE])
    assert (again.status, again.node_updates, again.edge_updates) == ("unchanged", 0, 0)
    assert (again.seq, again.event_id) == (first.seq, first.event_id)
    assert state_of(graph) == before


def test_the_same_feedback_sent_at_once_lands_once(graph: Gate) -> None:
    results: list[ImproveResult | Rejected] = []
    start = threading.Barrier(6)

    def send() -> None:
        start.wait()
        results.append(
            graph.graph_improve(session_id="s-1", outcome="accepted", used_node_ids=[ALICE])
        )

    threads = [threading.Thread(target=send) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(r.status for r in results)
    assert statuses == ["applied", "unchanged", "unchanged", "unchanged", "unchanged", "unchanged"]
    assert len(_feedback(graph)) == 1
    assert weights(graph, ALICE) == pytest.approx({ALICE: 0.65})


def test_other_feedback_on_a_rated_answer_is_refused(graph: Gate) -> None:
    first = improve(graph, "s-1", "accepted", used_node_ids=[ALICE])
    before = state_of(graph)
    other = graph.graph_improve(session_id="s-1", outcome="rejected", used_node_ids=[ALICE])
    assert isinstance(other, Rejected)
    assert other.error_code == "FEEDBACK_ALREADY_GIVEN"
    assert other.details["seq"] == first.seq
    assert state_of(graph) == before
    # another answer of the session, and another agent's feedback, are new feedback
    improve(graph, "s-1", "rejected", used_node_ids=[ALICE], answer_id="a-2")
    bot = Actor(agent="another-agent", session="x", transport="api")
    again = graph.graph_improve(
        session_id="s-1", outcome="accepted", used_node_ids=[ALICE], actor=bot
    )
    assert isinstance(again, ImproveResult)
    assert again.status == "applied"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"sessionId": "", "outcome": "accepted", "usedNodeIds": [ALICE]}, "sessionId"),
        ({"outcome": "accepted", "usedNodeIds": [ALICE]}, "sessionId"),
        ({"sessionId": "s-1", "outcome": "great", "usedNodeIds": [ALICE]}, "outcome"),
        ({"sessionId": "s-1", "outcome": "accepted"}, "usedNodeIds"),
        ({"sessionId": "s-1", "outcome": "accepted", "usedNodeIds": [7]}, "usedNodeIds.0"),
        (
            {"sessionId": "s-1", "outcome": "accepted", "usedEdgeKeys": [{"sourceId": ALICE}]},
            "usedEdgeKeys.0.targetId",
        ),
    ],
)
def test_malformed_feedback_is_an_invalid_argument(
    graph: Gate, arguments: dict[str, Any], field: str
) -> None:
    before = state_of(graph)
    improvements = Improvements(graph.writer, 0.3, graph.limits())
    refused = improvements.improve(arguments, AGENT)
    assert isinstance(refused, Rejected)
    assert refused.error_code == "INVALID_ARGUMENT"
    named = [e["field"] for e in refused.details.get("errors", [])] or [refused.details["field"]]
    assert field in named
    assert state_of(graph) == before


def test_facts_the_graph_does_not_hold_are_named_and_nothing_moves(graph: Gate) -> None:
    before = state_of(graph)
    ghost = 'Person{"name":"Ghost"}'
    refused = graph.graph_improve(
        session_id="s-1", outcome="accepted", used_node_ids=[ALICE, ghost], used_edge_keys=[EDGE]
    )
    assert isinstance(refused, Rejected)
    assert refused.error_code == "NODE_NOT_FOUND"
    assert refused.details["missing_nodes"] == [ghost]
    backwards = EdgeKey(sourceId=BOB, targetId=ALICE, relationshipName="KNOWS")
    refused = graph.graph_improve(session_id="s-1", outcome="accepted", used_edge_keys=[backwards])
    assert isinstance(refused, Rejected)
    assert refused.error_code == "RELATIONSHIP_NOT_FOUND"
    assert refused.details["missing_relationships"] == [backwards.model_dump(by_alias=True)]
    assert state_of(graph) == before
    # refused feedback did not rate the answer: it can be sent right
    assert improve(graph, "s-1", "accepted", used_node_ids=[ALICE]).status == "applied"


def test_feedback_on_a_merged_duplicate_lands_on_its_survivor(graph: Gate) -> None:
    graph.write_node(**person("alice"))
    merged = graph.merge_nodes(
        label="Person",
        survivor_keys={"name": "Alice"},
        duplicate_keys={"name": "alice"},
        source="review",
        extraction_method="manual",
    )
    assert merged.status == "merged", merged
    improve(graph, "s-1", "accepted", used_node_ids=['Person{"name":"alice"}'])
    assert weights(graph, ALICE) == pytest.approx({ALICE: 0.65})
    assert _feedback(graph)[0].nodes == [ALICE]


def test_the_event_carries_provenance_like_any_write(graph: Gate) -> None:
    improve(graph, "s-1", "rework", used_node_ids=[ALICE], reliability=0.8)
    event = graph.log.read(types=[FeedbackGiven.event_type]).events[0]
    assert event.actor == AGENT
    assert event.provenance is not None
    assert (event.provenance["source"], event.provenance["extraction_method"]) == (
        "session:s-1",
        "api",
    )
    assert event.provenance["confidence"] == pytest.approx(0.8)
    assert event.request == {
        "sessionId": "s-1",
        "outcome": "rework",
        "usedNodeIds": [ALICE],
        "usedEdgeKeys": [],
        "reliability": 0.8,
    }


def test_the_ranking_factor_has_a_floor() -> None:
    assert rank_factor(0.0) == 0.5  # a fact every answer rejected keeps half its relevance
    assert rank_factor(1.0) == 1.0
    assert rank_factor(0.5) == 0.75
    assert rank_factor(0.0, floor=0.2) == pytest.approx(0.2)
    # feedback reorders: a rejected fact twice as relevant still outranks an accepted one
    assert 2.0 * rank_factor(0.0) >= 1.0 * rank_factor(1.0)


def test_a_log_from_before_the_weights_is_weighed_again_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Gate.open(path, default_actor=AGENT) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(**person("Alice"))
        improve(gate, "s-1", "accepted", used_node_ids=[ALICE])
    conn = sqlite3.connect(path, isolation_level=None)  # as the layout before weights left it
    conn.execute("DROP TABLE state_feedback")
    conn.execute(
        "UPDATE projection_checkpoints SET seq = ? WHERE name = 'state.layout'",
        (FEEDBACK_LAYOUT - 1,),
    )
    conn.close()
    with Gate.open(path, readonly=True) as copy:  # read as it is: nobody rated anything
        assert weights(copy, ALICE) == {ALICE: 0.5}
        assert copy.state.equals_replay(copy.log, copy.log.connection())
    with Gate.open(path) as gate:  # a writer rebuilds the read model from the log
        assert weights(gate, ALICE) == pytest.approx({ALICE: 0.65})
        assert gate.state.equals_replay(gate.log, gate.log.connection())


def test_an_event_applied_again_moves_no_weight_again(tmp_path: Path) -> None:
    """A read model in a file of its own may be handed an event twice (at-least-once)."""
    with Gate.open(tmp_path / "log.db", default_actor=AGENT) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(**person("Alice"))
        improve(gate, "s-1", "accepted", used_node_ids=[ALICE])
        events = list(gate.log.iter_replayed())
    scratch = sqlite3.connect(":memory:", isolation_level=None)
    state = StateProjection()
    state.install(scratch)
    for event in [*events, events[-1]]:
        state.apply_event(scratch, event)
    assert feedback_weights(scratch, [ALICE]) == pytest.approx({ALICE: 0.65})
    assert state.snapshot(scratch)["state_feedback"] == [(ALICE, pytest.approx(0.65), 1, 3)]


def _feedback(gate: Gate) -> list[FeedbackGiven]:
    found = [payload_of(e) for e in gate.log.iter_events(types=[FeedbackGiven.event_type])]
    return [p for p in found if isinstance(p, FeedbackGiven)]


def test_the_result_is_the_seed_shape(graph: Gate) -> None:
    result = improve(graph, "s-1", "accepted", used_node_ids=[ALICE])
    assert sorted(dump(result)) == ["edgeUpdates", "event_id", "nodeUpdates", "seq", "status"]
