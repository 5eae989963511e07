"""Saying a fact again: from a support it had, nothing is appended; from a new agent, source
or method, one corroboration (no new version) raises its confidence by the provider's rule."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from freezegun import freeze_time

from tests.conftest import ROOT, person, relationship
from writegate.eventlog import Actor
from writegate.gate import BatchResult, Gate, ObservationResult, Rejected, WriteNodeResult, dump
from writegate.gate.audit.auditor import Auditor
from writegate.gate.formula import CORROBORATION_CAP, DefaultFormulaProvider, noisy_or
from writegate.gate.models import ProposedResult
from writegate.gate.review import ReviewDecision
from writegate.language import node_identity

ALICE = node_identity("Person", {"name": "Alice"})
REF = {"label": "Person", "merge_keys": {"name": "Alice"}}
# person()'s claim: manual at 0.9 -> 0.675; a second source's: api at 0.8 -> 0.8
FIRST, SECOND = 0.9 * 0.75, 0.8 * 1.0
BOTH = 1 - (1 - FIRST) * (1 - SECOND)  # noisy-OR of two independent sources: 0.935


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db


def provenance(gate: Gate) -> dict[str, object]:
    [node] = gate.reader().open_nodes([REF]).nodes
    return node.provenance.model_dump()


def test_the_same_write_from_the_same_source_appends_nothing(gate: Gate) -> None:
    with freeze_time("2031-05-01T09:00:00Z"):
        first = gate.write_node(**person())
    head = gate.log.head()
    with freeze_time("2031-05-02T09:00:00Z"):
        again = gate.write_node(**person())
    assert isinstance(first, WriteNodeResult)
    assert isinstance(again, WriteNodeResult)
    assert gate.log.head() == head
    assert again.status == "unchanged"
    assert (again.version, again.seq, again.event_id) == (1, first.seq, first.event_id)
    assert again.created is False
    assert provenance(gate)["written_at"] == "2031-05-01T09:00:00.000000Z"


def test_an_idempotent_retry_still_returns_the_first_result(gate: Gate) -> None:
    first = gate.write_node(**person(idempotency_key="k-1"))
    again = gate.write_node(**person(idempotency_key="k-1"))
    assert dump(again) == dump(first)
    assert again.status == "written"


def test_a_new_source_corroborates_without_a_new_version(gate: Gate) -> None:
    with freeze_time("2031-05-01T09:00:00Z"):
        first = gate.write_node(**person())
    with freeze_time("2031-05-03T09:00:00Z"):
        heard = gate.write_node(
            **person(source="registry", extraction_method="api", reliability=0.8)
        )
    assert isinstance(first, WriteNodeResult)
    assert isinstance(heard, WriteNodeResult)
    assert heard.status == "corroborated"
    assert heard.seq == first.seq + 1 == gate.log.head()[0]
    assert heard.version == 1
    assert heard.confidence == pytest.approx(SECOND)
    assert heard.corroborated_confidence == pytest.approx(BOTH)
    [event] = gate.log.read(after_seq=first.seq).events
    assert event.type == "node.corroborated"
    with gate.log.snapshot() as conn:
        row = gate.state.node(conn, ALICE)
    assert row is not None
    assert row.version == 1
    assert row.updated_seq == first.seq
    seen = provenance(gate)
    assert seen["confidence"] == pytest.approx(FIRST)  # the last write's own, as ever
    assert seen["corroborated_confidence"] == pytest.approx(BOTH)
    assert seen["sources"] == ["test", "registry"]


def test_a_third_write_from_a_recorded_source_is_unchanged(gate: Gate) -> None:
    gate.write_node(**person())
    gate.write_node(**person(source="registry", extraction_method="api", reliability=0.8))
    head = gate.log.head()
    again = gate.write_node(**person(source="registry", extraction_method="api", reliability=0.8))
    assert again.status == "unchanged"
    assert gate.log.head() == head
    assert provenance(gate)["corroborated_confidence"] == pytest.approx(BOTH)


def test_another_agent_on_the_same_source_is_support_but_no_independence(gate: Gate) -> None:
    gate.write_node(**person())
    heard = gate.write_node(actor=Actor(agent="second-reader"), **person())
    assert isinstance(heard, WriteNodeResult)
    assert heard.status == "corroborated"
    assert heard.corroborated_confidence == pytest.approx(FIRST)  # one source: as it was
    again = gate.write_node(actor=Actor(agent="second-reader"), **person())
    assert again.status == "unchanged"


def test_a_change_is_a_new_version_and_forgets_the_old_support(gate: Gate) -> None:
    gate.write_node(**person())
    gate.write_node(**person(source="registry", extraction_method="api", reliability=0.8))
    changed = gate.write_node(**person(properties={"age": 31}))
    assert isinstance(changed, WriteNodeResult)
    assert (changed.status, changed.version) == ("written", 2)
    assert "corroborated_confidence" not in provenance(gate)
    with gate.log.snapshot() as conn:
        assert [s.kind for s in gate.state.support(conn, ALICE)] == ["written"]
    heard = gate.write_node(**person(properties={"age": 31}, source="registry"))
    assert heard.status == "corroborated"


def test_a_subset_of_the_properties_says_the_same_fact(gate: Gate) -> None:
    gate.write_node(**person(properties={"age": 30, "email": "a@example.com"}))
    again = gate.write_node(**person(properties={"age": 30}))
    assert again.status == "unchanged"


def test_another_valid_time_is_a_new_version(gate: Gate) -> None:
    gate.write_node(**person(valid_from=datetime(2030, 1, 1, tzinfo=UTC)))
    same = gate.write_node(**person(valid_from=datetime(2030, 1, 1, tzinfo=UTC)))
    later = gate.write_node(**person(valid_from=datetime(2031, 1, 1, tzinfo=UTC)))
    assert same.status == "unchanged"
    assert (later.status, later.version) == ("written", 2)  # type: ignore[union-attr]


def test_an_unchanged_write_still_checks_if_version(gate: Gate) -> None:
    gate.write_node(**person())
    gate.write_node(**person(properties={"age": 31}))
    stale = gate.write_node(**person(properties={"age": 31}, if_version=1))
    current = gate.write_node(**person(properties={"age": 31}, if_version=2))
    assert isinstance(stale, Rejected)
    assert stale.error_code == "VERSION_CONFLICT"
    assert current.status == "unchanged"


def test_a_relationship_is_corroborated_and_unchanged_the_same_way(gate: Gate) -> None:
    gate.write_node(**person("Alice"))
    gate.write_node(**person("Bob"))
    first = gate.write_relationship(**relationship())
    head = gate.log.head()
    same = gate.write_relationship(**relationship())
    assert same.status == "unchanged"
    assert gate.log.head() == head
    heard = gate.write_relationship(**relationship(source="hr", reliability=0.5))
    assert heard.status == "corroborated"
    assert heard.version == first.version == 1  # type: ignore[union-attr]
    expected = 1 - (1 - 0.8 * 0.6) * (1 - 0.5 * 0.6)
    assert heard.corroborated_confidence == pytest.approx(expected)
    [edge] = gate.reader().open_nodes([REF]).edges
    assert edge.provenance.corroborated_confidence == pytest.approx(expected)
    assert edge.provenance.sources == ["test", "hr"]


def test_a_batch_answers_an_unchanged_item_beside_a_written_one(gate: Gate) -> None:
    first = gate.write_node(**person())
    batch = gate.write_batch(
        items=[{"op": "write_node", **person()}, {"op": "write_node", **person("Carol")}]
    )
    assert isinstance(batch, BatchResult)
    assert [r.status for r in batch.results] == ["unchanged", "written"]
    assert batch.results[0].seq == first.seq  # type: ignore[union-attr]
    assert batch.first_seq == batch.last_seq == gate.log.head()[0]


def test_a_batch_changing_nothing_appends_nothing(gate: Gate) -> None:
    first = gate.write_node(**person())
    head = gate.log.head()
    batch = gate.write_batch(items=[{"op": "write_node", **person()}])
    assert isinstance(batch, BatchResult)
    assert [r.status for r in batch.results] == ["unchanged"]
    assert batch.first_seq == batch.last_seq == first.seq  # type: ignore[union-attr]
    assert gate.log.head() == head


def test_audit_shows_the_supporting_sources(gate: Gate) -> None:
    with freeze_time("2031-05-01T09:00:00Z"):
        gate.write_node(**person())
    with freeze_time("2031-05-03T09:00:00Z"):
        gate.write_node(**person(source="registry", extraction_method="api", reliability=0.8))
    trail = Auditor(gate.log).trail(ALICE, "node")
    assert [e.type for e in trail.entries] == ["node.written", "node.corroborated"]
    assert [e.version for e in trail.entries] == [1, 1]
    assert [
        (s.kind, s.agent, s.source, s.extraction_method, s.occurred_at) for s in trail.supported_by
    ] == [
        ("written", "agent-test", "test", "manual", "2031-05-01T09:00:00.000000Z"),
        ("corroborated", "agent-test", "registry", "api", "2031-05-03T09:00:00.000000Z"),
    ]
    assert trail.supported_by[-1].corroborated_confidence == pytest.approx(BOTH)
    assert [s.seq for s in trail.supported_by] == [e.seq for e in trail.entries]


def test_a_nodes_history_lists_its_corroborations_between_its_versions(gate: Gate) -> None:
    gate.write_node(**person())
    gate.write_node(**person(source="registry", extraction_method="api", reliability=0.8))
    gate.write_node(**person(properties={"age": 37}))
    history = gate.reader().node_history(REF)
    assert [(e.type, e.source) for e in history.entries] == [
        ("node.written", "test"),
        ("node.corroborated", "registry"),
        ("node.written", "test"),
    ]
    paged = gate.reader().node_history(REF, limit=2)
    assert [e.type for e in paged.entries] == ["node.written", "node.corroborated"]
    rest = gate.reader().node_history(REF, cursor=paged.next_cursor)
    assert [e.type for e in rest.entries] == ["node.written"]


def test_replay_reproduces_every_support_and_confidence(gate: Gate) -> None:
    gate.write_node(**person())
    gate.write_node(**person(source="registry", extraction_method="api", reliability=0.8))
    gate.write_node(**person(source="third", reliability=0.5))
    gate.write_node(**person("Bob"))
    gate.write_relationship(**relationship())
    gate.write_relationship(**relationship(source="hr"))
    conn = gate.log.connection()
    assert gate.state.equals_replay(gate.log, conn)
    rebuilt = gate.state.rebuilt_snapshot(gate.log)
    assert rebuilt["state_support"] == gate.state.snapshot(conn)["state_support"]
    confidences = sorted(row[9] for row in rebuilt["state_support"])
    three = 1 - (1 - FIRST) * (1 - SECOND) * (1 - 0.5 * 0.75)
    assert confidences[-1] == pytest.approx(three)


def test_the_default_rule_is_noisy_or_capped_below_certainty() -> None:
    rule = DefaultFormulaProvider().corroborate
    assert rule([FIRST, SECOND]) == pytest.approx(BOTH)
    assert rule([0.7]) == 0.7
    assert rule([1.0]) == 1.0
    assert rule([0.9, 0.9, 0.9]) == CORROBORATION_CAP == 0.99
    assert noisy_or([1.0, 0.5]) == 1.0  # never below the best single source
    assert noisy_or([]) == 0.0


def test_graph_query_shows_a_corroborated_relationship(gate: Gate) -> None:
    gate.write_node(**person("Alice"))
    gate.write_node(**person("Bob"))
    gate.write_relationship(**relationship())
    gate.write_relationship(**relationship(source="hr", reliability=0.5))
    [triplet] = gate.reader().graph_query("Alice knows").triplets
    expected = 1 - (1 - 0.8 * 0.6) * (1 - 0.5 * 0.6)
    assert triplet.provenance.confidence == pytest.approx(0.8 * 0.6)
    assert triplet.provenance.corroborated_confidence == pytest.approx(expected)
    wire = triplet.model_dump(by_alias=True)["provenance"]
    assert wire["corroboratedConfidence"] == pytest.approx(expected)
    assert wire["sources"] == ["test", "hr"]


def test_a_repeated_write_held_for_review_is_held_and_approved_unchanged(
    db_path: str | Path,
) -> None:
    document = yaml.safe_load((ROOT / "fixtures" / "conflict_schema.yaml").read_text())
    document["nodes"]["Person"]["review_below"] = 0.5
    low: dict[str, Any] = {"source": "chat", "extraction_method": "llm", "reliability": 0.5}
    eve: dict[str, Any] = {
        "label": "Person",
        "merge_keys": {"name": "Eve"},
        "properties": {"role": "spy"},
    }
    with Gate.open(db_path, default_actor=Actor(agent="writer-1")) as gate:
        assert gate.publish_schema(document).status == "published"
        gate.write_node(**eve, source="hr.csv", extraction_method="parsed", reliability=0.95)
        again = gate.write_node(
            **eve, source="hr.csv", extraction_method="parsed", reliability=0.95
        )
        held = gate.write_node(**eve, **low)  # a new source, but below the floor: held
        assert again.status == "unchanged"
        assert isinstance(held, ProposedResult)
        decided = gate.reviews.decide(held.proposal, "approve", Actor(agent="rev-1"))
        assert isinstance(decided, ReviewDecision)
        assert decided.result is not None
        assert decided.result.status == "corroborated"
        again_held = gate.write_node(**eve, **low)
        assert isinstance(again_held, ProposedResult)  # the floor still holds it
        decided = gate.reviews.decide(again_held.proposal, "approve", Actor(agent="rev-1"))
        assert isinstance(decided, ReviewDecision)
        assert decided.result is not None
        assert decided.result.status == "unchanged"


def test_a_corroboration_cites_what_it_was_read_from(gate: Gate) -> None:
    gate.write_node(**person())
    kept = gate.record_observation(
        text="Alice is thirty.", source="registry", extraction_method="api"
    )
    assert isinstance(kept, ObservationResult)
    cited = [kept.observation_id]
    heard = gate.write_node(**person(source="registry", observations=cited))
    assert heard.status == "corroborated"
    [event] = gate.log.read(after_seq=heard.seq - 1, limit=1).events
    assert event.provenance is not None
    assert event.provenance["observations"] == cited
    with gate.log.snapshot() as conn:
        assert [c.observation for c in gate.state.cited_by(conn, ALICE)] == cited
    again = gate.write_node(**person(source="registry", observations=cited))
    assert again.status == "unchanged"  # the same support, citing nothing new
