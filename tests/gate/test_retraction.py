"""Retraction (issue 43): what a source said taken back — the report, the batches, the
merge proposed for undoing, verify and a replay, and unretract putting everything back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import person
from writegate.eventlog import Actor
from writegate.gate import Gate, ObservationResult, Rejected
from writegate.gate.errors import ErrorCode
from writegate.gate.merges.operations import MergeResult
from writegate.gate.retraction import RetractResult
from writegate.gate.unretraction import UnretractResult
from writegate.language import node_identity

REVIEWER = Actor(agent="reviewer")


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


def named(name: str) -> str:
    return node_identity("Person", {"name": name})


def said(gate: Gate, name: str) -> dict[str, Any] | None:
    """A node's properties and the confidence it reads at (None: not held)."""
    nodes = gate.reader().open_nodes([{"label": "Person", "merge_keys": {"name": name}}]).nodes
    if not nodes:
        return None
    [node] = nodes
    p = node.provenance
    confidence = p.corroborated_confidence if p.corroborated_confidence else p.confidence
    return {"properties": node.properties, "confidence": round(confidence, 6)}


def world(gate: Gate) -> dict[str, Any]:
    """S says three facts (two citing its observation), T and S both say Eve, S's evidence
    merged two of T's duplicates."""
    observed = gate.record_observation(
        text="Ann is 30 and Cleo is 40, says S.", source="S", extraction_method="manual"
    )
    assert isinstance(observed, ObservationResult)
    gate.write_node(**person("Ann", source="S", observations=[observed.observation_id]))
    gate.write_node(**person("Bob", source="T", properties={"age": 20}))
    gate.write_node(**person("Bob", source="S", properties={"age": 21}))
    gate.write_node(
        **person("Cleo", source="S", properties={"age": 40}, observations=[observed.observation_id])
    )
    gate.write_node(**person("Eve", source="S", properties={"age": 50}))
    heard = gate.write_node(
        **person("Eve", source="T", extraction_method="api", properties={"age": 50})
    )
    assert heard.status == "corroborated"
    gate.write_node(**person("Dup", source="T", properties={"age": 60}))
    gate.write_node(**person("Dupe", source="T", properties={"age": 60}))
    merged = gate.merge_nodes(
        label="Person",
        survivor_keys={"name": "Dup"},
        duplicate_keys={"name": "Dupe"},
        source="S",
        extraction_method="manual",
        actor=REVIEWER,
    )
    assert isinstance(merged, MergeResult)
    return {"observation": observed.observation_id, "merge": merged.merge}


NAMES = ("Ann", "Bob", "Cleo", "Eve", "Dup")


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
