"""The graph projection and the graph-backed registry against a live Bolt server."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, SEED_SCHEMA, person, relationship
from writegate.eventlog import EventLog
from writegate.gate import Gate, Rejected, WriteNodeResult, __version__
from writegate.gate.schema import load_document
from writegate.gate.schema.graph import GraphSchemaSource
from writegate.gate.schema.sources import SchemaSourceUnavailable
from writegate.projections.graph import BoltTarget, GraphProjector, ProjectionUnavailable
from writegate.projections.runner import replay
from writegate.projections.state import StateProjection

SEED_PROPERTIES = {
    "confidence",
    "source",
    "extraction_method",
    "write_gate_version",
    "last_updated",
}


def graph_nodes(target: BoltTarget) -> dict[tuple[str, str], dict[str, Any]]:
    """(label, name) -> properties, read straight from the server."""
    projector = GraphProjector(target)
    try:
        snapshot = projector.snapshot()
    finally:
        projector.close()
    return {(labels[0], props["name"]): props for labels, props in snapshot["nodes"]}


def test_projected_nodes_carry_exactly_seed_000s_properties(
    history_gate: Gate, bolt: BoltTarget
) -> None:
    projector = GraphProjector(bolt)
    try:
        replay(history_gate.log, projector)
    finally:
        projector.close()
    nodes = graph_nodes(bolt)
    assert set(nodes) == {
        ("Person", "Alice"),
        ("Person", "Bob"),
        ("Person", "Carol"),
        ("Organization", "Initech"),
        ("Entity", "Widget"),
    }  # Dan was deleted (detached)
    alice = nodes["Person", "Alice"]
    assert set(alice) == {"name", "age", *SEED_PROPERTIES}  # skills removed by a null
    assert alice["age"] == 31
    assert alice["confidence"] == 1.0
    assert (alice["source"], alice["extraction_method"]) == ("hr.csv", "api")
    assert alice["write_gate_version"] == __version__
    assert alice["last_updated"].startswith("2032-01-01T09:05:00")
    bob = nodes["Person", "Bob"]
    assert set(bob) == {"name", "age", "_schema_remap_from", *SEED_PROPERTIES}
    assert bob["_schema_remap_from"] == ":person"
    assert nodes["Entity", "Widget"]["_schema_remap_from"] == ":Gizmo"
    carol = nodes["Person", "Carol"]
    assert "_stub" not in carol  # written properly after being a stub
    assert carol["age"] == 25


def test_a_stub_endpoint_is_marked(gate: Gate, bolt: BoltTarget) -> None:
    gate.write_node(**person("Alice"))
    gate.write_relationship(**relationship(endpoint_policy="merge_endpoints"))
    projector = GraphProjector(bolt)
    try:
        replay(gate.log, projector)
    finally:
        projector.close()
    nodes = graph_nodes(bolt)
    assert nodes["Person", "Bob"]["_stub"] is True
    assert set(nodes["Person", "Bob"]) == {"name", "_stub", *SEED_PROPERTIES}
    assert "_stub" not in nodes["Person", "Alice"]


def test_an_edge_carries_the_valid_time_its_writer_stated(gate: Gate, bolt: BoltTarget) -> None:
    gate.write_node(**person("Alice"))
    stated = gate.write_relationship(
        **relationship(endpoint_policy="merge_endpoints"),
        valid_from=datetime(2020, 1, 1, tzinfo=UTC),
        valid_to=datetime(2021, 1, 1, tzinfo=UTC),
    )
    assert not isinstance(stated, Rejected)
    gate.write_relationship(
        **relationship(to_keys={"name": "Carol"}, endpoint_policy="merge_endpoints")
    )
    again = gate.write_relationship(**relationship(properties={"context": "work"}))
    assert not isinstance(again, Rejected)  # a later write stating no valid time keeps it
    edges = graph_edges(gate, bolt)
    assert edges["Bob"]["context"] == "work"
    assert edges["Bob"]["valid_from"] == "2020-01-01T00:00:00.000000Z"
    assert edges["Bob"]["valid_to"] == "2021-01-01T00:00:00.000000Z"
    assert "valid_from" not in edges["Carol"]  # unstated: from its record time, still true


def graph_edges(gate: Gate, target: BoltTarget) -> dict[str, dict[str, Any]]:
    """The projected relationships by the name of the node they end at."""
    projector = GraphProjector(target)
    try:
        replay(gate.log, projector)
        return {
            end["name"]: props for _, _, _, _, end, props in projector.snapshot()["relationships"]
        }
    finally:
        projector.close()


def test_the_graph_holds_the_current_facts(db_path: Path, bolt: BoltTarget) -> None:
    """A functional relationship replaced is gone from the graph (as from the read model:
    one employer at a time, as the schema says); its successor carries its valid time; the
    replaced one stays in the log (``show relationship --valid-at``, ``audit node``)."""
    with Gate.open(db_path) as gate:
        gate.publish_schema(FIXTURES / "conflict_schema.yaml")
        for name, since in (("Initech", None), ("Globex", datetime(2023, 1, 1, tzinfo=UTC))):
            written = gate.write_relationship(
                type="WORKS_FOR",
                from_label="Person",
                from_keys={"name": "Ada"},
                to_label="Organization",
                to_keys={"name": name},
                endpoint_policy="merge_endpoints",
                valid_from=since,
                source="hr.csv",
                extraction_method="parsed",
                reliability=0.9,
            )
            assert written.status == "written", written
        edges = graph_edges(gate, bolt)
    assert set(edges) == {"Globex"}
    assert edges["Globex"]["valid_from"] == "2023-01-01T00:00:00.000000Z"
    assert "valid_to" not in edges["Globex"]


ORGANISATIONS = {
    "nodes": {
        "Organization": {
            "merge_keys": ["name"],
            "resolution": {"policy": "auto", "kind": "organisation"},
        }
    }
}


def test_a_resolved_write_leaves_its_breadcrumb(db_path: Path, bolt: BoltTarget) -> None:
    """As a remap leaves ``_schema_remap_from``, entity resolution leaves ``_resolved_from``:
    the identity the writer named, on the node the write landed on."""
    with Gate.open(db_path) as gate:
        gate.publish_schema(ORGANISATIONS)
        for name, city in (("Acme Corp", None), ("Acme Corporation", "Springfield")):
            landed = gate.write_node(  # resolved, the second says something new (a city)
                label="Organization",
                merge_keys={"name": name},
                properties={"city": city} if city else {},
                source="s",
                extraction_method="api",
            )
        assert isinstance(landed, WriteNodeResult)
        assert landed.resolved_from == 'Organization{"name":"Acme Corporation"}'
        projector = GraphProjector(bolt)
        try:
            replay(gate.log, projector)
        finally:
            projector.close()
    nodes = graph_nodes(bolt)
    assert set(nodes) == {("Organization", "Acme Corp")}
    assert nodes["Organization", "Acme Corp"]["_resolved_from"] == landed.resolved_from


def test_an_unreachable_server_is_a_clear_error_and_moves_nothing(history_gate: Gate) -> None:
    dead = BoltTarget("bolt://127.0.0.1:9", "x", "y", None, "neo4j", retry_seconds=0.5)
    projector = GraphProjector(dead)
    try:
        with pytest.raises(ProjectionUnavailable, match=r"graph server bolt://127\.0\.0\.1:9"):
            projector.apply(list(history_gate.log.iter_events()))
    finally:
        projector.close()


# -- seed 000's graph-backed registry, live --------------------------------------------------


@pytest.fixture
def graph_gate(db_path: Path, bolt: BoltTarget) -> Any:
    registry = GraphSchemaSource(bolt.driver, bolt.database, bolt.uri)
    registry.publish(load_document(SEED_SCHEMA))
    with Gate(EventLog(db_path, inline=[StateProjection()]), registry) as g:
        yield g, registry


def test_registry_reads_seed_000s_query(graph_gate: Any) -> None:
    gate, registry = graph_gate
    snapshot = registry.load()
    assert snapshot.registry.all_canonical_labels() == ["Entity", "Organization", "Person"]
    assert snapshot.registry.get_entry("Person").required_properties == ["name"]
    assert gate.refresh_schema_cache().loaded == 3


def test_row_03_remap_from_the_graph_registry(graph_gate: Any) -> None:
    gate, _ = graph_gate
    result = gate.write_node(**person(label=":person"))
    assert isinstance(result, WriteNodeResult)
    assert (result.label, result.remapped_from) == ("Person", ":person")


def test_row_05_reject_mode_with_the_graph_registry(
    graph_gate: Any, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, registry = graph_gate
    monkeypatch.setenv("WRITE_GATE_UNKNOWN_LABEL_POLICY", "reject")  # read when a gate opens
    with Gate(EventLog(db_path, inline=[StateProjection()]), registry) as gate:
        result = gate.write_node(**person(label="ZZZNonexistent"))
    assert isinstance(result, Rejected)
    assert result.error_code == "SCHEMA_UNKNOWN_LABEL"


def test_row_07_unregistered_type_with_the_graph_registry(graph_gate: Any) -> None:
    gate, _ = graph_gate
    gate.write_node(**person("Alice"))
    gate.write_node(**person("Bob"))
    result = gate.write_relationship(**relationship(type="DIRECTED"))
    assert isinstance(result, Rejected)
    assert result.error_code == "SCHEMA_UNKNOWN_LABEL"


def test_row_10_refresh_after_adding_event_to_the_graph(graph_gate: Any, bolt: BoltTarget) -> None:
    gate, _ = graph_gate
    loaded = gate.refresh_schema_cache().loaded
    assert gate.write_node(**person("Launch", label="Event")).label == "Entity"
    with bolt.driver() as driver, driver.session(database=bolt.database) as session:
        session.run(
            "CREATE (:Schema {name: 'Event', allowed: true, required_properties: ['name'], "
            "absorbs: [], merge_keys: ['name']})"
        ).consume()
    refreshed = gate.refresh_schema_cache()
    assert refreshed.loaded == loaded + 1
    result = gate.write_node(**person("Launch", label="Event"))
    assert isinstance(result, WriteNodeResult)
    assert (result.label, result.remapped_from) == ("Event", None)


def test_an_unreachable_registry_keeps_the_previous_snapshot(graph_gate: Any) -> None:
    gate, registry = graph_gate
    gate.refresh_schema_cache()
    gone = BoltTarget("bolt://127.0.0.1:9", "x", "y", None, "neo4j", retry_seconds=0.5)
    registry._driver = gone.driver  # the server went away
    with pytest.raises(SchemaSourceUnavailable):
        registry.load()
    refreshed = gate.refresh_schema_cache()
    assert isinstance(refreshed, Rejected)
    assert refreshed.error_code == "SCHEMA_SOURCE_UNAVAILABLE"
    assert refreshed.details["previous_snapshot_kept"] is True
    assert gate.write_node(**person(label=":person")).label == "Person"


def test_a_refresh_asks_a_registry_that_failed_again_at_once(
    graph_gate: Any, db_path: Path
) -> None:
    _, registry = graph_gate
    live = registry._driver
    gone = BoltTarget("bolt://127.0.0.1:9", "x", "y", None, "neo4j", retry_seconds=0.5)
    registry._driver = gone.driver  # down while the gate starts: no snapshot yet
    with Gate(EventLog(db_path, inline=[StateProjection()]), registry) as gate:
        refused = gate.write_node(**person("Eve"))
        assert isinstance(refused, Rejected)
        assert refused.error_code == "SCHEMA_SOURCE_UNAVAILABLE"
        registry._driver = live  # back
        assert gate.refresh_schema_cache().status == "refreshed"  # asked, not answered from
        assert gate.write_node(**person("Eve")).status == "written"
