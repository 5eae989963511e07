"""Schema documents, sources, the unknown-label policy and atomic refresh."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import EXAMPLE_SCHEMA, SEED_SCHEMA, person, seed_document
from writegate.eventlog import Actor, EventLog
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.schema import (
    FileSchemaSource,
    LoadedSchema,
    SchemaDocumentError,
    SchemaEntry,
    SchemaSourceUnavailable,
    load_document,
    parse_document,
)
from writegate.projections.state import StateProjection


def test_example_schema_is_valid_and_versioned_by_content() -> None:
    doc = load_document(EXAMPLE_SCHEMA)
    assert "Person" in doc.nodes
    assert doc.version() == load_document(EXAMPLE_SCHEMA).version()
    changed = parse_document({**doc.model_dump(by_alias=True), "description": "other"})
    assert changed.version() != doc.version()


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ({"nodes": {"Bad Label": {}}}, "not a valid identifier"),
        ({"nodes": {"A": {"properties": {"confidence": {}}}}}, "gate-computed"),
        ({"nodes": {"A": {"remaps_from": ["x"]}, "B": {"remaps_from": ["x"]}}}, "remaps to both"),
        ({"nodes": {"A": {"remaps_from": ["B"]}, "B": {}}}, "itself canonical"),
        ({"nodes": {"A": {}}, "fallback_label": "Nope"}, "fallback_label"),
        ({"nodes": {"A": {}}, "relationships": {"R": {"from": ["Nope"]}}}, "undeclared"),
        ({"nodes": {"A": {"properties": {"t": {"type": "integer", "enum": ["x"]}}}}}, "enum value"),
        ({"nodes": {"A": {}}, "unknown_label_policy": "maybe"}, "unknown_label_policy"),
        ({"nodes": {"A": {"colour": "red"}}}, "colour"),
    ],
)
def test_invalid_documents_say_where(document: dict[str, Any], fragment: str) -> None:
    with pytest.raises(SchemaDocumentError, match=fragment):
        parse_document(document)


def test_json_and_yaml_files_load_the_same(tmp_path: Path) -> None:

    as_json = tmp_path / "s.json"
    as_json.write_text(json.dumps(seed_document()))
    assert load_document(as_json).version() == load_document(SEED_SCHEMA).version()


def test_missing_file_source_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(SchemaSourceUnavailable, match="cannot read schema"):
        FileSchemaSource(tmp_path / "absent.yaml").load()


def test_gate_without_any_schema_rejects_with_source_unavailable(db_path: Path) -> None:
    with Gate.open(db_path) as g:
        result = g.write_node(**person())
        assert isinstance(result, Rejected)
        assert result.error_code == "SCHEMA_SOURCE_UNAVAILABLE"
        assert g.log.head()[0] == 0


def test_a_schema_published_meanwhile_binds_the_next_write(db_path: Path) -> None:
    with Gate.open(db_path) as g, Gate.open(db_path) as publisher:
        refused = g.write_node(**person())
        assert isinstance(refused, Rejected)
        assert refused.error_code == "SCHEMA_SOURCE_UNAVAILABLE"
        assert publisher.publish_schema(SEED_SCHEMA).status == "published"
        assert g.write_node(**person()).status == "written"  # the log is asked again at once


def test_failed_refresh_keeps_the_previous_snapshot(db_path: Path, tmp_path: Path) -> None:
    schema_file = tmp_path / "schema.yaml"
    schema_file.write_text(SEED_SCHEMA.read_text())
    with Gate.open(db_path, schema_file=schema_file) as g:
        assert g.refresh_schema_cache().status == "refreshed"
        schema_file.write_text("nodes: [this is not a mapping")
        result = g.refresh_schema_cache()
        assert isinstance(result, Rejected)
        assert result.error_code == "SCHEMA_SOURCE_UNAVAILABLE"
        assert result.details["previous_snapshot_kept"] is True
        assert g.write_node(**person()).status == "written"


def test_policy_precedence_explicit_over_env_over_document(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = seed_document()
    doc["unknown_label_policy"] = "reject"
    with Gate.open(db_path) as g:
        g.publish_schema(doc)
        assert g.write_node(**person(label="Nope")).status == "rejected"  # the document's policy
    monkeypatch.setenv("WRITE_GATE_UNKNOWN_LABEL_POLICY", "remap")
    with Gate.open(db_path) as g:
        assert g.write_node(**person(label="Nope")).status == "written"  # env beats document
    with Gate.open(db_path, unknown_label_policy="reject") as g:
        assert g.write_node(**person(label="Nope2")).status == "rejected"  # explicit beats env
    monkeypatch.setenv("WRITE_GATE_UNKNOWN_LABEL_POLICY", "sometimes")
    with pytest.raises(ValueError, match="WRITE_GATE_UNKNOWN_LABEL_POLICY"):
        Gate.open(db_path)


def test_every_event_names_the_schema_version_it_was_checked_against(gate: Gate) -> None:
    v1 = gate.current_schema().version
    first = gate.write_node(**person("A"))
    doc = seed_document()
    doc["nodes"]["Event"] = {"merge_keys": ["name"]}
    gate.publish_schema(doc)
    gate.refresh_schema_cache()
    second = gate.write_node(**person("B"))
    assert isinstance(first, WriteNodeResult)
    assert isinstance(second, WriteNodeResult)
    assert first.schema_version == v1 != second.schema_version
    published = gate.log.read(types=["schema.published"]).events
    assert [e.payload["version"] for e in published] == [v1, second.schema_version]


def test_publishing_the_same_schema_twice_appends_once(gate: Gate) -> None:
    head = gate.log.head()
    assert gate.publish_schema(SEED_SCHEMA).status == "unchanged"
    assert gate.log.head() == head


def test_write_in_flight_finishes_against_its_snapshot(db_path: Path) -> None:
    """A slow formula holds a write mid-flight while refresh swaps in a schema without Person."""
    release, entered = threading.Event(), threading.Event()

    class SlowFormula:
        def allowed_extraction_methods(self) -> set[str]:
            return {"manual"}

        def compute(self, reliability: float, extraction_method: str) -> float:
            entered.set()
            release.wait(5)
            return reliability

    doc = seed_document()
    with Gate.open(db_path, formula=SlowFormula()) as g:
        g.publish_schema(doc)
        g.refresh_schema_cache()
        results: list[Any] = []
        writer = threading.Thread(target=lambda: results.append(g.write_node(**person())))
        writer.start()
        entered.wait(5)
        del doc["nodes"]["Person"]
        doc["relationships"] = {}
        g.publish_schema(doc)
        assert g.refresh_schema_cache().loaded == 2  # type: ignore[union-attr]
        release.set()
        writer.join(5)
        assert isinstance(results[0], WriteNodeResult)
        assert results[0].label == "Person"  # checked against the pre-refresh snapshot
        assert g.write_node(**person("B", properties={})).label == "Entity"  # type: ignore[union-attr]


def test_third_party_registry_with_only_the_seed_methods(db_path: Path) -> None:
    """A registry implementing just seed 000's protocol (plus relationship lookup) works."""

    class Minimal:
        def get_entry(self, label: str) -> SchemaEntry | None:
            return SchemaEntry("Person", ["name"], ["person"]) if label == "Person" else None

        def all_canonical_labels(self) -> list[str]:
            return ["Person"]

        def remap_target(self, label: str) -> str | None:
            return "Person" if label == "person" else None

        def fallback_label(self) -> str | None:
            return None

        def get_relationship_type(self, type: str) -> None:
            return None

        def relationship_remap_target(self, type: str) -> None:
            return None

    class Source:
        def describe(self) -> str:
            return "minimal"

        def load(self) -> LoadedSchema:
            return LoadedSchema(Minimal(), "minimal-1")

    g = Gate(
        EventLog(db_path, inline=[StateProjection()]), Source(), default_actor=Actor(agent="t")
    )
    assert g.write_node(**person(label="person")).remapped_from == ":person"  # type: ignore[union-attr]
    missing = g.write_node(**person(merge_keys={"id": 1}, properties={}))
    assert isinstance(missing, Rejected)
    assert missing.error_code == "SCHEMA_MISSING_REQUIRED_PROPERTY"
    assert g.write_node(**person(label="Robot")).error_code == "SCHEMA_UNKNOWN_LABEL"  # type: ignore[union-attr]
    g.close()


def test_schema_file_from_yaml_dump_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "x.yml"
    path.write_text(yaml.safe_dump(seed_document()))
    assert "Person" in load_document(path).nodes
