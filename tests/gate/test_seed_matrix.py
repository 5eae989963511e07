"""Seed 000's test matrix, rows 1-10, through the public gate API."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import AGENT, SEED_SCHEMA, person, relationship, seed_document, state_of
from writegate.gate import Gate, Rejected, WriteNodeResult, WriteRelationshipResult, __version__


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db


def _node(g: Gate, label: str, name: str) -> dict[str, object]:
    node = g.state.node(g.log.connection(), f'{label}{{"name":"{name}"}}')
    assert node is not None, f"{label} {name} not in state"
    return {"properties": node.properties, "stub": node.stub, "remapped_from": node.remapped_from}


def test_row_01_write_node_computes_confidence_and_stamps_version(gate: Gate) -> None:
    result = gate.write_node(**person())
    assert isinstance(result, WriteNodeResult)
    assert result.status == "written"
    assert result.confidence == 0.675  # 0.9 x 0.75
    assert result.write_gate_version == __version__
    assert result.label == "Person"
    assert result.merge_keys == {"name": "Alice"}
    assert result.remapped_from is None
    event = gate.log.read(after_seq=result.seq - 1, limit=1).events[0]
    assert event.provenance is not None
    assert event.provenance["confidence"] == 0.675
    assert event.provenance["source"] == "test"
    assert event.provenance["extraction_method"] == "manual"
    assert event.actor == AGENT


def test_row_02_protected_field_is_rejected(gate: Gate) -> None:
    result = gate.write_node(**person(properties={"confidence": 1.0}))
    assert isinstance(result, Rejected)
    assert result.error_code == "SCHEMA_PROTECTED_FIELD"


def test_row_03_registered_synonym_remaps_to_canonical_label(gate: Gate) -> None:
    result = gate.write_node(**person(label=":person"))
    assert isinstance(result, WriteNodeResult)
    assert result.label == "Person"
    assert result.remapped_from == ":person"
    assert _node(gate, "Person", "Alice")["remapped_from"] == ":person"


def test_row_04_unknown_label_remaps_to_fallback_in_remap_mode(gate: Gate) -> None:
    result = gate.write_node(**person(label="ZZZNonexistent"))
    assert isinstance(result, WriteNodeResult)
    assert result.status == "written"
    assert result.label == "Entity"
    assert result.remapped_from == ":ZZZNonexistent"
    assert _node(gate, "Entity", "Alice")["remapped_from"] == ":ZZZNonexistent"


def test_row_05_unknown_label_is_rejected_in_reject_mode(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WRITE_GATE_UNKNOWN_LABEL_POLICY", "reject")
    with Gate.open(db_path) as g:
        g.publish_schema(SEED_SCHEMA)
        result = g.write_node(**person(label="ZZZNonexistent"))
    assert isinstance(result, Rejected)
    assert result.error_code == "SCHEMA_UNKNOWN_LABEL"


def test_row_06_missing_required_property_lists_it(gate: Gate) -> None:
    result = gate.write_node(**person(merge_keys={}, properties={}))
    assert isinstance(result, Rejected)
    assert result.error_code == "SCHEMA_MISSING_REQUIRED_PROPERTY"
    assert "name" in result.details["missing"]


def test_row_07_unregistered_relationship_type_is_rejected(gate: Gate) -> None:
    gate.write_node(**person("Alice"))
    gate.write_node(**person("Bob"))
    before = state_of(gate)
    result = gate.write_relationship(**relationship(type="DIRECTED"))
    assert isinstance(result, Rejected)
    assert result.error_code == "SCHEMA_UNKNOWN_LABEL"  # regression for #127
    assert state_of(gate) == before


def test_row_08_missing_endpoint_fails_by_default(gate: Gate) -> None:
    gate.write_node(**person("Alice"))
    result = gate.write_relationship(**relationship())  # Bob was never written
    assert isinstance(result, Rejected)
    assert result.error_code == "ENDPOINT_NOT_FOUND"
    assert result.details["end"] == "to"


def test_row_09_merge_endpoints_creates_a_stub(gate: Gate) -> None:
    gate.write_node(**person("Alice"))
    result = gate.write_relationship(**relationship(endpoint_policy="merge_endpoints"))
    assert isinstance(result, WriteRelationshipResult)
    assert result.status == "written"
    assert [s.model_dump() for s in result.stubs_created] == [
        {"label": "Person", "merge_keys": {"name": "Bob"}}
    ]
    assert _node(gate, "Person", "Bob")["stub"] is True
    assert _node(gate, "Person", "Alice")["stub"] is False


@pytest.mark.parametrize("source", ["log", "file"])
def test_row_10_refresh_after_adding_event_label(
    db_path: Path, tmp_path: Path, source: str
) -> None:
    document = seed_document()
    schema_file = tmp_path / "schema.yaml"
    schema_file.write_text(yaml.safe_dump(document))
    with Gate.open(db_path, schema_file=schema_file if source == "file" else None) as g:
        g.publish_schema(document)
        n = g.refresh_schema_cache().loaded  # type: ignore[union-attr]
        event_write = person("Launch", label="Event", properties={})
        assert g.write_node(**event_write).label == "Entity"  # type: ignore[union-attr]  # not yet known

        document["nodes"]["Event"] = {"merge_keys": ["name"], "required": ["name"]}
        if source == "file":
            schema_file.write_text(yaml.safe_dump(document))
        else:
            g.publish_schema(document)
        refreshed = g.refresh_schema_cache()
        assert refreshed.status == "refreshed"
        assert refreshed.loaded == n + 1
        result = g.write_node(**event_write)
    assert isinstance(result, WriteNodeResult)
    assert result.label == "Event"
    assert result.remapped_from is None
