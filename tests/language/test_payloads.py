"""The typed event language reads and writes exactly what the log always stored.

A log written before the language existed (``fixtures/logs``, see ``golden_log``) is
loaded row by row: its chain verifies, every payload and provenance round-trips through
its model to the same canonical bytes, the shortcut that skips validation agrees with
full validation, and the projections replay it to the bytes that code produced.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.language.golden_log import golden, load_rows
from writegate.eventlog import EventCore, canonical_json
from writegate.gate import Gate
from writegate.language import (
    DEFAULT_SCOPE,
    EVENT_TYPES,
    NodeRef,
    NodeWritten,
    RelationshipWritten,
    SchemaPublished,
    UnknownPayload,
    WriteProvenance,
    draft,
    payload_of,
    provenance_of,
)
from writegate.language.payloads import PAYLOADS
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.prov import ProvProjector
from writegate.projections.statestore import StateStore


@pytest.fixture
def old_log(tmp_path: Path) -> Path:
    db = tmp_path / "old.db"
    load_rows(db)
    return db


@pytest.fixture
def old_events(old_log: Path) -> list[EventCore]:
    with Gate.open(old_log, readonly=True) as gate:
        return list(gate.log.iter_replayed())


def test_the_old_log_verifies(old_log: Path) -> None:
    with Gate.open(old_log) as gate:  # the inline state model catches up from the rows
        report = gate.verify()
    assert report.ok, [c for c in report.checks if not c.ok]


NEWER = {
    "write.proposed",
    "proposal.decided",
    "nodes.merged",
    "nodes.unmerged",
    "observation.recorded",
    "feedback.given",
    "node.corroborated",
    "relationship.corroborated",
    "nodes.indexed",
    "label.searchable",
    "source.retracted",
    "source.unretracted",
}  # after the old log


def test_every_payload_round_trips_to_the_same_bytes(old_events: list[EventCore]) -> None:
    assert {e.type for e in old_events} == set(EVENT_TYPES) - NEWER
    for event in old_events:
        payload = payload_of(event)
        assert type(payload) is PAYLOADS[event.type]
        assert canonical_json(payload.stored()) == canonical_json(event.payload), event.seq
        provenance = provenance_of(event)
        if provenance is None:
            assert event.provenance is None
        else:
            assert canonical_json(provenance.stored()) == canonical_json(event.provenance)


def test_the_unvalidated_reading_agrees_with_validation(old_events: list[EventCore]) -> None:
    for event in old_events:
        validated = PAYLOADS[event.type].model_validate(event.payload)
        assert payload_of(event) == validated, event.seq
        if event.provenance is not None:
            assert provenance_of(event) == WriteProvenance.model_validate(event.provenance)


def test_a_draft_stores_what_the_model_says(old_events: list[EventCore]) -> None:
    written = next(e for e in old_events if e.type == NodeWritten.event_type)
    payload = payload_of(written)
    assert isinstance(payload, NodeWritten)
    provenance = provenance_of(written)
    made = draft(payload, [payload.node.stream], provenance=provenance, expected={"x": 1})
    assert made.type == "node.written"
    assert made.payload == written.payload
    assert made.provenance == written.provenance
    assert made.streams == tuple(written.streams)
    assert made.expected_versions == {"x": 1}


def test_batch_items_are_stored_only_in_batches(old_events: list[EventCore]) -> None:
    in_batch = [e for e in old_events if "batch_item" in e.payload]
    alone = [e for e in old_events if "batch_item" not in e.payload]
    assert in_batch
    assert alone
    for event in in_batch:
        assert "batch_item" in payload_of(event).stored()
    for event in alone:
        assert "batch_item" not in payload_of(event).stored()


def test_relationship_endpoints_and_node_refs_are_typed(old_events: list[EventCore]) -> None:
    rel = next(payload_of(e) for e in old_events if e.type == RelationshipWritten.event_type)
    assert isinstance(rel, RelationshipWritten)
    assert isinstance(rel.from_node, NodeRef)
    assert rel.from_node == NodeRef.of(
        rel.from_node.label, rel.from_node.keys, rel.from_node.remapped_from
    )
    schema = next(payload_of(e) for e in old_events if e.type == SchemaPublished.event_type)
    assert isinstance(schema, SchemaPublished)
    assert schema.version.startswith("sha256:")


def test_an_unknown_event_type_is_carried_not_interpreted(old_events: list[EventCore]) -> None:
    future = old_events[1].model_copy(update={"type": "node.levitated", "payload": {"how": 1}})
    payload = payload_of(future)
    assert isinstance(payload, UnknownPayload)
    assert payload.stored() == {"how": 1}


@pytest.mark.parametrize("fmt", ["memorymesh", "mcp-memory"])
def test_the_old_log_replays_to_the_same_jsonl(
    old_log: Path, old_events: list[EventCore], tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / "snapshot.jsonl"
    with Gate.open(old_log, readonly=True) as gate:
        projector = JsonlProjector(out, gate.log, "snapshot", fmt)  # type: ignore[arg-type]
        projector.apply(old_events)
        projector.close()
    assert out.read_bytes() == golden(f"{fmt}.jsonl").read_bytes()


def test_the_old_log_replays_to_the_same_prov_and_state(
    old_events: list[EventCore], tmp_path: Path
) -> None:
    prov = ProvProjector(tmp_path / "prov.nt", "prov")
    prov.apply(old_events)
    prov.close()
    assert (tmp_path / "prov.nt").read_bytes() == golden("prov.nt").read_bytes()
    state = StateStore(tmp_path / "state.db")
    state.apply(old_events)
    snapshot = json.loads(json.dumps(state.snapshot()))
    state.close()
    old = json.loads(golden("state.json").read_text())  # the tables 0.1 had
    # the columns 0.1 had, as they were; those added since as an event that records none
    # leaves them: a node's scope the implicit one, its resolution keys none (0.1's schema
    # resolved nothing), no property kept out of its text
    width = {table: len(rows[0]) for table, rows in old.items()}
    assert {t: [row[: width[t]] for row in snapshot[t]] for t in old} == old
    added = {tuple(row[width["nodes"] :]) for row in snapshot["nodes"]}
    assert added == {(DEFAULT_SCOPE, None, None)}
