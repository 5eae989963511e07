"""Observations through the Python API, on SQLite and on PostgreSQL: kept once by their
content, refused without a trace, cited by the facts extracted from them, found by their
words, and rebuilt by a replay exactly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import person, relationship, state_of
from writegate.gate import Gate, GateRejection, ObservationResult, Rejected
from writegate.gate.formula import compute_confidence
from writegate.gate.limits import Limits
from writegate.gate.reads.observations import ObservationReader
from writegate.gate.reads.reader import GraphReader
from writegate.language import node_identity, observation_id, relationship_identity

ALICE = node_identity("Person", {"name": "Alice"})
HEARD = "Alice said she moved to Lisbon in 2019 and works with Bob."


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db


def said(**overrides: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "text": HEARD,
        "source": "chat:42",
        "extraction_method": "llm",
        "reliability": 0.8,
        "session": "conversation-7",
    }
    args.update(overrides)
    return args


def recorded(gate: Gate, **overrides: Any) -> ObservationResult:
    result = gate.record_observation(**said(**overrides))
    assert isinstance(result, ObservationResult), result
    return result


def test_an_observation_is_kept_with_its_provenance(gate: Gate) -> None:
    moment = datetime(2024, 5, 1, 12, tzinfo=UTC)
    result = recorded(gate, said_at=moment, reliability=0.123456789)  # kept to the last digit
    assert result.status == "recorded"
    assert result.observation_id == observation_id(HEARD, "chat:42", "2024-05-01T12:00:00.000000Z")
    with gate.log.snapshot() as conn:
        row = gate.state.observation(conn, result.observation_id)
    assert row is not None
    assert (row.text, row.source, row.method) == (HEARD, "chat:42", "llm")
    assert row.reliability == 0.123456789
    assert row.confidence == compute_confidence(gate.formula, 0.123456789, "llm")
    assert (row.agent, row.session, row.seq) == ("agent-test", "conversation-7", result.seq)
    assert row.said_at == "2024-05-01T12:00:00.000000Z"
    assert row.recorded_at > row.said_at
    event = gate.log.latest(f"obs:{result.observation_id}")
    assert event is not None
    assert event.event_id == result.event_id


def test_without_a_time_it_was_said_when_recorded(gate: Gate) -> None:
    result = recorded(gate)
    with gate.log.snapshot() as conn:
        row = gate.state.observation(conn, result.observation_id)
    assert row is not None
    assert row.said_at == row.recorded_at
    assert result.observation_id == observation_id(HEARD, "chat:42", None)


def test_recording_it_again_appends_nothing_and_answers_unchanged(gate: Gate) -> None:
    first = recorded(gate, said_at=datetime(2024, 5, 1, 14, tzinfo=timezone(timedelta(hours=2))))
    before = state_of(gate)
    again = recorded(gate, said_at=datetime(2024, 5, 1, 12, tzinfo=UTC), session="another")
    assert again.status == "unchanged"
    assert (again.observation_id, again.seq, again.event_id) == (
        first.observation_id,
        first.seq,
        first.event_id,
    )
    assert state_of(gate) == before
    other = recorded(gate, source="chat:43")  # another source: another observation
    assert other.status == "recorded"
    assert other.observation_id != first.observation_id


def test_an_idempotent_retry_answers_the_first_result(gate: Gate) -> None:
    first = recorded(gate, idempotency_key="k-1")
    head = gate.log.head()
    assert recorded(gate, idempotency_key="k-1") == first
    assert gate.log.head() == head
    reused = gate.record_observation(**said(text="something else", idempotency_key="k-1"))
    assert isinstance(reused, Rejected)
    assert reused.error_code == "IDEMPOTENCY_KEY_REUSED"


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"text": ""}, "INVALID_ARGUMENT"),
        ({"text": " \n\t "}, "INVALID_ARGUMENT"),
        ({"source": ""}, "INVALID_ARGUMENT"),
        ({"extraction_method": "guessing"}, "INVALID_EXTRACTION_METHOD"),
        ({"session": "s" * 201}, "INVALID_ARGUMENT"),
    ],
)
def test_a_refused_observation_appends_nothing(
    gate: Gate, overrides: dict[str, Any], code: str
) -> None:
    before = state_of(gate)
    result = gate.record_observation(**said(**overrides))
    assert isinstance(result, Rejected), result
    assert result.error_code == code
    assert state_of(gate) == before
    last = list(gate.rejections.read())[-1]
    assert (last.operation, last.error_code) == ("record_observation", code)


def test_a_text_is_held_to_the_size_a_document_may_have(db_path: str | Path) -> None:
    with Gate.open(db_path, limits=Limits(max_value_bytes=64, max_document_bytes=128)) as small:
        small.publish_schema(Path(__file__).parents[2] / "fixtures" / "seed000_schema.yaml")
        result = small.record_observation(**said(text="é" * 80))  # 160 bytes in UTF-8
        assert isinstance(result, Rejected)
        assert result.error_code == "LIMIT_EXCEEDED"
        assert result.details == {
            "limit": "max_document_bytes", "max": 128, "got": 160, "field": "text"
        }  # fmt: skip
        # longer than one value may be (a property's), not than a document
        assert isinstance(small.record_observation(**said(text="e" * 120)), ObservationResult)


def test_a_write_citing_an_unknown_observation_is_refused_and_appends_nothing(gate: Gate) -> None:
    known = recorded(gate).observation_id
    unknown = "obs_" + "0" * 32
    before = state_of(gate)
    result = gate.write_node(**person(observations=[known, unknown]))
    assert isinstance(result, Rejected)
    assert result.error_code == "OBSERVATION_NOT_FOUND"
    assert result.details == {"missing": [unknown]}
    malformed = gate.write_node(**person(observations=["obs_nothex"]))
    assert isinstance(malformed, Rejected)
    assert malformed.error_code == "INVALID_ARGUMENT"
    too_many = gate.write_node(**person(observations=[known] * 33))
    assert isinstance(too_many, Rejected)
    assert too_many.error_code == "INVALID_ARGUMENT"
    batch = gate.write_batch(
        items=[
            {"op": "write_node", **person("Bob")},
            {"op": "write_node", **person(observations=[unknown])},
        ]
    )
    assert isinstance(batch, Rejected)
    assert batch.error_code == "OBSERVATION_NOT_FOUND"
    assert batch.details["item"] == 1
    assert state_of(gate) == before


def test_every_fact_s_provenance_names_the_observations_it_cites(gate: Gate) -> None:
    heard = recorded(gate).observation_id
    read = recorded(gate, text="Bob's page: Bob knows Alice.", source="wiki:bob").observation_id
    assert gate.write_node(**person(observations=[heard, heard])).status == "written"
    batch = gate.write_batch(
        items=[
            {"op": "write_node", **person("Bob", observations=[read])},
            {"op": "write_relationship", **relationship(observations=[read, heard])},
        ]
    )
    assert batch.status == "written"
    knows = relationship_identity("KNOWS", ALICE, node_identity("Person", {"name": "Bob"}))
    opened = GraphReader(gate.log, gate.state).open_nodes(
        [{"label": "Person", "merge_keys": {"name": "Alice"}}]
    )
    alice = next(n for n in opened.nodes if n.merge_keys == {"name": "Alice"})
    assert alice.provenance.observations == [heard]  # each cited once
    assert opened.edges[0].provenance.observations == [read, heard]
    with gate.log.snapshot() as conn:
        assert [(c.identity, c.kind) for c in gate.state.citing(conn, read)] == [
            (node_identity("Person", {"name": "Bob"}), "node"),
            (knows, "relationship"),
        ]
        assert [c.observation for c in gate.state.cited_by(conn, knows)] == sorted([heard, read])
        facts = gate.state.facts(conn, ALICE, ["age"])
    assert facts["age"].provenance is not None
    assert facts["age"].provenance.observations == [heard]


def test_a_citation_outlives_the_fact_it_backed(gate: Gate) -> None:
    heard = recorded(gate).observation_id
    gate.write_node(**person(observations=[heard]))
    reader = ObservationReader(gate.log, gate.state)
    assert reader.open_observation(heard).facts == [ALICE]
    gate.delete_node(
        label="Person", merge_keys={"name": "Alice"}, source="test", extraction_method="manual"
    )
    with gate.log.snapshot() as conn:
        [citation] = gate.state.citing(conn, heard)
    assert (citation.identity, citation.standing) == (ALICE, False)
    assert reader.open_observation(heard).facts == []


def test_observations_are_found_by_their_words_ranked_and_paged(gate: Gate) -> None:
    texts = [f"Meeting {i} about the Lisbon office" for i in range(5)]
    ids = [recorded(gate, text=text).observation_id for text in texts]
    best = recorded(gate, text="Lisbon office lease: Lisbon, Lisbon office.").observation_id
    recorded(gate, text="Nothing about that city here.")
    gate.write_node(**person("Lisbon Lee"))  # a node: not an observation
    reader = ObservationReader(gate.log, gate.state)
    assert reader.search_observations("lisbon office", 1).observations[0].observation_id == best
    seen: list[str] = []
    cursor = None
    while True:
        page = reader.search_observations("lisb", 2, cursor)
        seen += [o.observation_id for o in page.observations]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert sorted(seen) == sorted([*ids, best])
    for bad in ({"query": "  "}, {"query": "x", "limit": 0}, {"query": "x", "cursor": "nope"}):
        with pytest.raises(GateRejection) as refused:
            reader.search_observations(**bad)
        assert refused.value.code == "INVALID_ARGUMENT"
    with pytest.raises(GateRejection) as missing:
        reader.open_observation("obs_" + "1" * 32)
    assert missing.value.code == "OBSERVATION_NOT_FOUND"


def test_a_replay_rebuilds_observations_and_citations(gate: Gate) -> None:
    heard = recorded(gate).observation_id
    gate.write_node(**person(observations=[heard]))
    gate.write_node(**person("Bob", observations=[heard]))
    gate.delete_node(
        label="Person", merge_keys={"name": "Bob"}, source="test", extraction_method="manual"
    )
    conn = gate.log.connection()
    live = gate.state.snapshot(conn)
    assert len(live["state_observations"]) == 1
    assert len(live["state_citations"]) == 2
    assert heard in [d[0] for d in live["search_documents"]]
    assert gate.state.rebuilt_snapshot(gate.log) == live
    assert gate.state.equals_replay(gate.log, conn)
    conn.execute("DELETE FROM state_citations WHERE identity = ?", (ALICE,))  # gone astray
    assert not gate.state.equals_replay(gate.log, conn)
