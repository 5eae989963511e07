"""Documents as observations through the Python API, on SQLite and PostgreSQL (issue 39): a
text far longer than one value is one observation — one event, one row — cut into passages
by the gate when it is recorded; each passage is found and cited by ``<id>#<start>``, the
document opens whole, and a personal document is forgotten with every passage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from freezegun import freeze_time

from tests.conftest import AGENT, ROOT
from tests.documents import FACT, QUESTION, document
from tests.gate.scoped import only
from tests.personal import raw_bytes
from writegate.gate import Gate, GateRejection, ObservationResult, Rejected
from writegate.gate.audit.auditor import Auditor
from writegate.gate.forgetting import ForgetResult
from writegate.gate.passages import MAX_PASSAGE, WHOLE_UP_TO
from writegate.gate.retention import RetainResult
from writegate.language import ObservationRecorded, node_identity, payload_of

SIZE = 200_000  # characters: three times what one value may be, cut into ~100 passages
CLAIM: dict[str, Any] = {"source": "paste", "extraction_method": "manual"}
OTTOLINE = node_identity("Person", {"name": "Ottoline Varga"})


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db


def kept(gate: Gate, text: str) -> ObservationResult:
    result = gate.record_observation(text=text, **CLAIM)
    assert isinstance(result, ObservationResult), result
    return result


def middle(result: ObservationResult, at: int) -> str:
    """The id of the passage holding the character at ``at``."""
    assert result.passages is not None
    return f"{result.observation_id}#{max(s for s in result.passages if s <= at)}"


def test_a_document_is_one_event_and_one_row_with_its_passages_in_the_event(gate: Gate) -> None:
    text, _ = document(SIZE)
    before = gate.log.head()[0]
    result = kept(gate, text)
    assert gate.log.head()[0] == before + 1  # one event
    [event] = gate.log.read(after_seq=before, limit=10).events
    payload = payload_of(event)
    assert isinstance(payload, ObservationRecorded)
    assert payload.text == text
    assert payload.passages == result.passages  # the cuts are the event's
    assert result.passages is not None
    assert result.passages[0] == 0
    lengths = [b - a for a, b in payload.spans()]
    assert sum(lengths) == len(text)
    assert max(lengths) <= MAX_PASSAGE
    with gate.log.snapshot() as conn:
        rows = gate.state.snapshot(conn)
    assert [r[0] for r in rows["state_observations"]] == [result.observation_id]  # one row
    documents = [d for d in rows["search_documents"] if d[1] == "observation"]
    assert [d[0] for d in documents] == sorted(  # each passage, never the whole text
        f"{result.observation_id}#{s}" for s in result.passages
    )
    assert "".join(d[2] for d in sorted(documents, key=lambda d: int(d[0].split("#")[1]))) == text
    assert gate.verify().ok  # the read model and its index are what a replay makes


def test_a_text_that_is_one_passage_records_the_event_it_always_did(gate: Gate) -> None:
    result = kept(gate, "Ada said she moved to Lisbon.")
    assert result.passages is None
    long_turn, at = document(WHOLE_UP_TO - 1_000)  # many passages long, not a document
    whole = kept(gate, long_turn)
    assert whole.passages is None  # found and answered whole, as a long turn always was
    found = gate.observation_reader().search_observations(QUESTION, 3).observations
    assert [o.observation_id for o in found] == [whole.observation_id]
    assert at > MAX_PASSAGE
    event = gate.log.latest(f"obs:{result.observation_id}")
    assert event is not None
    assert "passages" not in event.payload
    assert "passages" not in result.model_dump()


def test_a_question_about_the_middle_finds_its_passage_and_a_write_cites_it(gate: Gate) -> None:
    text, at = document(SIZE)
    result = kept(gate, text)
    passage = middle(result, at)
    found = gate.reader().graph_query(QUESTION).observations
    assert [o.observation_id for o in found][:1] == [passage]
    start = int(passage.split("#")[1])
    assert (found[0].document, found[0].start) == (result.observation_id, start)
    assert FACT in found[0].text
    assert len(found[0].text) <= MAX_PASSAGE
    searched = gate.observation_reader().search_observations(QUESTION, 3).observations
    assert searched[0].observation_id == passage
    assert searched[0].document == result.observation_id

    written = gate.write_node(
        label="Person", merge_keys={"name": "Ottoline Varga"}, properties={},
        observations=[passage], **CLAIM,
    )  # fmt: skip
    assert written.status == "written", written
    opened = gate.observation_reader().open_observation(passage)
    assert opened.facts == [OTTOLINE]
    assert FACT in opened.text
    [entry] = Auditor(gate.log).trail(OTTOLINE).entries
    assert [c.observation_id for c in entry.observations] == [passage]
    assert " ".join(opened.text.split()).startswith(entry.observations[0].excerpt.rstrip("…"))
    whole = gate.observation_reader().open_observation(result.observation_id)
    assert whole.text == text
    assert whole.passages == result.passages
    assert whole.document is None
    assert whole.facts == [OTTOLINE]  # a write citing a passage cites the document


def test_a_passage_that_is_not_one_is_refused_by_a_code_of_its_own(gate: Gate) -> None:
    text, _ = document(SIZE)
    result = kept(gate, text)
    short = kept(gate, "A short remark.")
    assert result.passages is not None
    for missing in (
        f"{result.observation_id}#{result.passages[1] + 1}",
        f"{short.observation_id}#0",
    ):
        refused = gate.write_node(
            label="Person", merge_keys={"name": "Nobody"}, properties={},
            observations=[missing], **CLAIM,
        )  # fmt: skip
        assert isinstance(refused, Rejected)
        assert (refused.error_code, refused.details) == (
            "OBSERVATION_NOT_FOUND",
            {"missing": [missing]},
        )
    malformed = gate.write_node(
        label="Person", merge_keys={"name": "Nobody"}, properties={},
        observations=[f"{result.observation_id}#x"], **CLAIM,
    )  # fmt: skip
    assert isinstance(malformed, Rejected)
    assert malformed.error_code == "INVALID_ARGUMENT"
    with pytest.raises(GateRejection) as unknown:
        gate.observation_reader().open_observation(f"{short.observation_id}#0")
    assert unknown.value.code == "OBSERVATION_NOT_FOUND"


def test_a_personal_document_is_forgotten_whole_with_every_passage(
    db_path: str | Path, request: pytest.FixtureRequest
) -> None:
    schema = yaml.safe_load((ROOT / "fixtures" / "personal_schema.yaml").read_text())
    schema["personal_observations"] = True
    text, at = document(SIZE)
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(schema).status == "published"
        result = kept(gate, text)
        passage = middle(result, at)
        written = gate.write_node(
            label="Person", merge_keys={"name": "Ottoline Varga"}, properties={},
            observations=[passage], **CLAIM,
        )  # fmt: skip
        assert written.status == "written", written
        assert kept(gate, "a plain remark").status == "recorded"
        found = gate.observation_reader().search_observations(QUESTION, 3).observations
        assert found[0].observation_id == passage  # the read model holds it clear
        sample = text[1000:1100].encode()  # some sentences of the document, not the fact
        # PostgreSQL compresses a long text in its files: its bytes are read on SQLite only
        on_disk = isinstance(db_path, Path)
        assert not on_disk or sample in raw_bytes(gate, request)  # the test can fail

        done = gate.forget("Person", {"name": "Ottoline Varga"}, reason="asked")
        assert isinstance(done, ForgetResult), done
        assert done.counts["state_observations"] == 1
        assert done.counts["state_passages"] == len(result.passages or [])
        raw = raw_bytes(gate, request)
        for gone in (sample, b"Ottoline", FACT.encode()):
            assert not on_disk or gone not in raw
        assert b"a plain remark" in raw
        assert gate.observation_reader().search_observations(QUESTION, 3).observations == []
        with gate.log.snapshot() as conn:
            assert gate.state.observation(conn, passage) is None
            assert gate.state.passage_starts(conn, result.observation_id) == []
            held = gate.state.snapshot(conn)
        left = [d for d in held["search_documents"] if d[0].startswith(result.observation_id)]
        assert left == [(result.observation_id, "observation", "")]  # no passage: a replay's
        texts = {row[0]: row[1] for row in held["state_observations"]}
        assert texts[result.observation_id] == ""  # its row's text, as a replay reads it
        assert gate.verify().ok


def test_a_document_kept_in_a_scope_is_found_and_opened_by_passage_only_inside_it(
    scoped_gate: Gate,
) -> None:
    text, at = document(100_000)
    result = scoped_gate.record_observation(text=text, scope="b", **CLAIM)
    assert isinstance(result, ObservationResult), result
    passage = middle(result, at)
    inside = scoped_gate.observation_reader(scopes=only("b"))
    assert inside.search_observations(QUESTION, 3).observations[0].observation_id == passage
    assert FACT in inside.open_observation(passage).text
    outside = scoped_gate.observation_reader(scopes=only("a"))
    assert outside.search_observations(QUESTION, 3).observations == []
    for hidden in (passage, result.observation_id):
        with pytest.raises(GateRejection) as missing:
            outside.open_observation(hidden)
        assert missing.value.code == "OBSERVATION_NOT_FOUND"
    assert scoped_gate.reader(scopes=only("a")).graph_query(QUESTION).observations == []


def test_a_personal_document_past_its_retention_leaves_with_every_passage(
    db_path: str | Path, request: pytest.FixtureRequest
) -> None:
    schema = yaml.safe_load((ROOT / "fixtures" / "personal_schema.yaml").read_text())
    schema.update(personal_observations=True, observation_retention="P7D")
    text, _ = document(SIZE)
    start = datetime(2026, 1, 5, 9, tzinfo=UTC)
    with freeze_time(start), Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(schema).status == "published"
        result = kept(gate, text)
    with freeze_time(start + timedelta(days=8)), Gate.open(db_path, create=False) as gate:
        done = gate.retain()
        assert isinstance(done, RetainResult), done
        assert done.counts["state_passages"] == len(result.passages or [])
        assert gate.observation_reader().search_observations(QUESTION, 3).observations == []
        assert not isinstance(db_path, Path) or FACT.encode() not in raw_bytes(gate, request)
        assert gate.verify().ok


def test_a_document_said_beside_a_found_remark_is_not_lent_to_whole(gate: Gate) -> None:
    text, _ = document(SIZE)
    for minute, said in enumerate(["The keeper read the harbour log aloud.", text, "Thanks!"]):
        recorded = gate.record_observation(
            text=said, session="s-9", said_at=datetime(2024, 5, 1, 12, minute, tzinfo=UTC),
            **CLAIM,
        )  # fmt: skip
        assert isinstance(recorded, ObservationResult), recorded
    found = gate.reader().graph_query("harbour log aloud").observations
    assert found[0].text == "The keeper read the harbour log aloud."
    assert [o.text for o in found if o.context_of] == ["Thanks!"]  # lent to; the document not
    assert all(len(o.text) <= MAX_PASSAGE for o in found)
