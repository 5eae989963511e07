"""Retraction (issue 43): what a source said taken back — the report, the batches, the
merge proposed for undoing, verify and a replay, and unretract putting everything back."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import person, relationship
from tests.retracted import NAMES, named, said, world
from writegate.eventlog import Actor
from writegate.gate import Gate, ObservationResult, Rejected
from writegate.gate.errors import ErrorCode
from writegate.gate.retraction import RetractResult
from writegate.gate.unretraction import UnretractResult
from writegate.projections.jsonl import JsonlProjector

REVIEWER = Actor(agent="reviewer")


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


def test_a_source_is_taken_back_reported_first_and_put_back(gate: Gate) -> None:
    made = world(gate)
    before = {name: said(gate, name) for name in NAMES}
    head = gate.log.head()

    report = gate.retract(source="S", dry_run=True)
    assert isinstance(report, RetractResult)
    assert gate.log.head() == head  # the report appends nothing
    assert sorted(report.retracted) == [named("Ann"), named("Cleo")]
    assert report.reverted == [named("Bob")]
    assert [k.identity for k in report.kept] == [named("Eve")]
    t_alone = before["Bob"]
    assert t_alone is not None
    assert report.kept[0].confidence == pytest.approx(0.9)  # T's own: api at 0.9
    assert report.merges == [made["merge"]]
    assert report.observations == [made["observation"]]

    done = gate.retract(source="S", reason="S was a hoax")
    assert isinstance(done, RetractResult)
    assert done.retraction is not None
    assert (done.reverted, sorted(done.retracted)) == (report.reverted, report.retracted)
    assert said(gate, "Ann") is None
    assert said(gate, "Cleo") is None
    assert said(gate, "Bob") == {"properties": {"name": "Bob", "age": 20}, "confidence": 0.675}
    assert said(gate, "Eve") == {"properties": {"name": "Eve", "age": 50}, "confidence": 0.9}
    [proposal] = gate.reviews.queue().proposals
    assert (proposal.operation, proposal.arguments["merge"]) == ("unmerge_nodes", made["merge"])
    assert said(gate, "Dup") == before["Dup"]  # proposed, not undone
    assert gate.verify().ok
    with gate.log.snapshot() as conn:
        assert gate.state.equals_replay(gate.log, conn)

    undone = gate.unretract(done.retraction)
    assert isinstance(undone, UnretractResult)
    assert undone.changed == []
    assert {name: said(gate, name) for name in NAMES} == before
    assert gate.verify().ok
    with gate.log.snapshot() as conn:
        assert gate.state.equals_replay(gate.log, conn)
    again = gate.unretract(done.retraction)
    assert isinstance(again, Rejected)
    assert again.error_code == ErrorCode.RETRACTION_NOT_FOUND


def test_a_retraction_in_many_batches_takes_back_every_fact(gate: Gate) -> None:
    for i in range(23):
        gate.write_node(**person(f"P{i:02}", source="S"))
    done = gate.retract(source="S", reason="bulk", batch=5)
    assert isinstance(done, RetractResult)
    assert (done.facts, done.batches) == (23, 5)
    assert gate.reader().search_nodes("P07").nodes == []
    undone = gate.unretract(done.retraction or "", batch=7)
    assert isinstance(undone, UnretractResult)
    assert len(undone.restored) == 23
    with gate.log.snapshot() as conn:
        assert gate.state.equals_replay(gate.log, conn)


def test_a_retraction_after_its_undoing_takes_back_the_same(gate: Gate) -> None:
    """Each fact's history then holds the batches of the first retraction and its undoing,
    each naming many facts: the second reverts and retracts exactly what the first did,
    reading each fact's entry alone (``gate.retraction_history``)."""
    world(gate)
    for i in range(12):  # a fact T said first and S said again: reverted to T's
        gate.write_node(**person(f"Q{i:02}", properties={"age": i}, source="T"))
        gate.write_node(**person(f"Q{i:02}", properties={"age": i + 40}, source="S"))
    first = gate.retract(source="S", reason="hoax", batch=5)
    assert isinstance(first, RetractResult)
    taken = {name: said(gate, name) for name in [*NAMES, *(f"Q{i:02}" for i in range(12))]}
    assert taken["Q03"] == {"properties": {"name": "Q03", "age": 3}, "confidence": 0.675}
    assert isinstance(gate.unretract(first.retraction or "", batch=4), UnretractResult)
    again = gate.retract(source="S", reason="hoax again", batch=3)
    assert isinstance(again, RetractResult)
    assert (sorted(again.reverted), sorted(again.retracted)) == (
        sorted(first.reverted),
        sorted(first.retracted),
    )
    assert {name: said(gate, name) for name in taken} == taken
    assert gate.verify().ok
    with gate.log.snapshot() as conn:
        assert gate.state.equals_replay(gate.log, conn)


def test_bad_input_is_refused_naming_it(gate: Gate) -> None:
    nothing = gate.retract(reason="why")
    assert isinstance(nothing, Rejected)
    assert nothing.error_code == ErrorCode.INVALID_ARGUMENT
    when = gate.retract(source="S", since="yesterday", reason="why")
    assert isinstance(when, Rejected)
    assert "'yesterday'" in when.message
    missing = gate.unretract("r-000000000000")
    assert isinstance(missing, Rejected)
    assert missing.error_code == ErrorCode.RETRACTION_NOT_FOUND


def test_a_reviewer_approving_the_proposal_undoes_the_merge(gate: Gate) -> None:
    made = world(gate)
    done = gate.retract(source="S", reason="S was a hoax")
    assert isinstance(done, RetractResult)
    assert len(done.proposals) == 1
    decided = gate.reviews.decide(done.proposals[0], "approve", Actor(agent="second-reviewer"))
    assert not isinstance(decided, Rejected), decided
    assert said(gate, "Dupe") is not None  # the duplicate is back
    assert gate.reviews.queue().proposals == []
    again = gate.unmerge_nodes(
        merge=made["merge"], source="T", extraction_method="manual", actor=Actor(agent="x")
    )
    assert isinstance(again, Rejected)
    assert gate.verify().ok


def test_a_write_naming_what_was_taken_back_is_refused_unless_a_new_source_says_it(
    gate: Gate,
) -> None:
    made = world(gate)
    done = gate.retract(source="S", reason="S was a hoax")
    assert isinstance(done, RetractResult)
    again = gate.write_node(**person("Ann", source="S"))
    assert isinstance(again, Rejected)
    assert again.error_code == ErrorCode.SOURCE_RETRACTED
    assert again.details == {"source": "S", "retraction": done.retraction}
    cited = [made["observation"]]
    quoted = gate.write_node(**person("Zed", source="S", observations=cited))
    assert isinstance(quoted, Rejected)
    assert quoted.error_code == ErrorCode.SOURCE_RETRACTED
    vouched = gate.write_node(**person("Zed", source="U", observations=cited))
    assert not isinstance(vouched, Rejected), vouched  # a new source says it
    assert gate.unretract(done.retraction or "").status == "ok"
    assert not isinstance(gate.write_node(**person("Ann", source="S")), Rejected)


def test_an_observation_taken_back_is_refused_from_its_own_source(gate: Gate) -> None:
    made = world(gate)
    done = gate.retract(observation=made["observation"], reason="misheard")
    assert isinstance(done, RetractResult)
    assert sorted(done.retracted) == [named("Ann"), named("Cleo")]
    cited = [made["observation"]]
    refused = gate.write_node(**person("Zed", source="S", observations=cited))
    assert isinstance(refused, Rejected)
    assert refused.error_code == ErrorCode.OBSERVATION_RETRACTED
    assert not isinstance(
        gate.write_node(**person("Zed", source="T", observations=cited)), Rejected
    )
    assert not isinstance(gate.write_node(**person("Yan", source="S")), Rejected)


def test_an_observation_no_fact_cites_is_taken_back_and_given_back(gate: Gate) -> None:
    observed = gate.record_observation(
        text="Nobody cites me.", source="S", extraction_method="manual"
    )
    assert isinstance(observed, ObservationResult)
    done = gate.retract(observation=observed.observation_id, reason="withdrawn")
    assert isinstance(done, RetractResult)
    assert (done.facts, done.batches, done.observations) == (0, 1, [observed.observation_id])
    cited = [observed.observation_id]
    refused = gate.write_node(**person("Zed", source="S", observations=cited))
    assert isinstance(refused, Rejected)
    assert refused.error_code == ErrorCode.OBSERVATION_RETRACTED
    assert gate.unretract(done.retraction or "").status == "ok"
    assert not isinstance(
        gate.write_node(**person("Zed", source="S", observations=cited)), Rejected
    )
    with gate.log.snapshot() as conn:
        assert gate.state.equals_replay(gate.log, conn)


def test_relationships_go_first_and_a_node_another_source_links_stays_a_stub(
    gate: Gate, tmp_path: Path
) -> None:
    gate.write_node(**person("Ann", source="S"))
    gate.write_node(**person("Bob", source="T"))
    gate.write_relationship(**relationship(from_keys={"name": "Ann"}, source="S"))
    gate.write_node(**person("Cy", source="S"))
    gate.write_relationship(
        **relationship(from_keys={"name": "Bob"}, to_keys={"name": "Cy"}, source="T")
    )
    done = gate.retract(source="S", reason="hoax")
    assert isinstance(done, RetractResult)
    assert done.retracted[0].startswith("(")  # the relationship, before the nodes
    assert said(gate, "Ann") is None
    with gate.log.snapshot() as conn:
        cy = gate.state.node(conn, named("Cy"))
        assert cy is not None
        assert cy.stub  # T's relationship still ends there
        assert gate.state.equals_replay(gate.log, conn)
    out = tmp_path / "g.jsonl"
    projector = JsonlProjector(out, gate.log, fmt="memorymesh")
    projector.apply(list(gate.log.iter_events()))
    projector.close()
    assert "Ann" not in out.read_text()
    assert gate.unretract(done.retraction or "").status == "ok"
    with gate.log.snapshot() as conn:
        assert gate.state.equals_replay(gate.log, conn)
        assert gate.state.node(conn, named("Ann")) is not None
        back = gate.state.node(conn, named("Cy"))
        assert back is not None
        assert not back.stub
