"""Corroborations in every projection: the JSONL snapshot says a node's facts are
corroborated and by which sources, the Bolt graph carries the sources and the confidence
(cleared by a new version), PROV-O attributes the version to each supporting agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rdflib import Graph, Literal
from rdflib.namespace import PROV

from tests.conftest import person, relationship
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.projections.graph import BoltTarget, GraphProjector
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.prov import WG, ProvProjector, iri, node_iri, relationship_iri
from writegate.projections.runner import replay

FIRST, SECOND = 0.9 * 0.75, 0.8 * 1.0
BOTH = 1 - (1 - FIRST) * (1 - SECOND)


def corroborated(gate: Gate) -> None:
    """Alice written, corroborated by another agent from another source; Bob, and a
    relationship corroborated once."""
    gate.write_node(**person())
    gate.write_node(
        actor=Actor(agent="registrar"),
        **person(source="registry", extraction_method="api", reliability=0.8),
    )
    gate.write_node(**person("Bob"))
    gate.write_relationship(**relationship())
    gate.write_relationship(**relationship(source="hr", reliability=0.5))


def test_the_jsonl_snapshot_says_what_corroborates_a_node(gate: Gate, tmp_path: Path) -> None:
    corroborated(gate)
    out = tmp_path / "g.jsonl"
    projector = JsonlProjector(out, gate.log, fmt="memorymesh")
    projector.apply(list(gate.log.iter_events()))
    projector.close()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    alice = next(r for r in records if r.get("name") == "Alice")
    assert f"Corroborated Confidence: {BOTH}" in alice["metadata"]
    assert "Supported By: test, registry" in alice["metadata"]
    bob = next(r for r in records if r.get("name") == "Bob")
    assert not any(m.startswith("Corroborated") for m in bob["metadata"])
    [edge] = [r for r in records if r["type"] == "edge"]
    assert edge["weight"] == pytest.approx(1 - (1 - 0.48) * (1 - 0.3))
    gate.write_node(**person(properties={"age": 31}))  # a new version: its writer alone
    projector = JsonlProjector(out, gate.log, fmt="memorymesh")
    projector.apply(list(gate.log.iter_events(after_seq=projector.checkpoint())))
    projector.close()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    alice = next(r for r in records if r.get("name") == "Alice")
    assert not any(m.startswith(("Corroborated", "Supported")) for m in alice["metadata"])


def test_a_rebuilt_jsonl_snapshot_is_the_followed_one(gate: Gate, tmp_path: Path) -> None:
    corroborated(gate)
    events = list(gate.log.iter_events())
    followed, rebuilt = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    one = JsonlProjector(followed, gate.log, fmt="memorymesh")
    for event in events:  # one batch an event: corroborations of nodes already stored
        one.apply([event])
    one.close()
    whole = JsonlProjector(rebuilt, gate.log, fmt="memorymesh")
    whole.apply(events)
    whole.close()
    assert followed.read_bytes() == rebuilt.read_bytes()


def _graph(target: BoltTarget) -> dict[str, Any]:
    projector = GraphProjector(target)
    try:
        snapshot: dict[str, Any] = projector.snapshot()
        return snapshot
    finally:
        projector.close()


def test_the_bolt_graph_carries_supporting_sources(gate: Gate, bolt: BoltTarget) -> None:
    corroborated(gate)
    projector = GraphProjector(bolt)
    try:
        replay(gate.log, projector)
    finally:
        projector.close()
    snapshot = _graph(bolt)
    nodes = {props["name"]: props for _, props in snapshot["nodes"]}
    assert nodes["Alice"]["_supported_by"] == ["test", "registry"]
    assert nodes["Alice"]["_corroborated_confidence"] == pytest.approx(BOTH)
    assert nodes["Alice"]["confidence"] == pytest.approx(FIRST)  # the last write's, as ever
    assert "_supported_by" not in nodes["Bob"]
    [(_, _, _, _, _, edge)] = snapshot["relationships"]
    assert edge["_supported_by"] == ["test", "hr"]
    gate.write_node(**person(properties={"age": 31}))
    projector = GraphProjector(bolt)
    try:
        projector.apply(list(gate.log.iter_events(after_seq=projector.checkpoint())))
    finally:
        projector.close()
    alice = {props["name"]: props for _, props in _graph(bolt)["nodes"]}["Alice"]
    assert "_supported_by" not in alice
    assert "_corroborated_confidence" not in alice
    assert alice["age"] == 31


def test_prov_attributes_the_version_to_every_supporting_agent(gate: Gate, tmp_path: Path) -> None:
    corroborated(gate)
    projector = ProvProjector(tmp_path / "prov.nt", log=gate.log)
    projector.apply(list(gate.log.iter_events()))
    graph: Graph = projector.graph()
    projector.close()
    alice = node_iri('Person{"name":"Alice"}')
    version = alice + "/v1"
    attributed = set(graph.objects(version, PROV.wasAttributedTo))
    assert attributed == {iri("agent", "agent-test"), iri("agent", "registrar")}
    assert (version, PROV.wasDerivedFrom, iri("source", "registry")) in graph
    [activity] = graph.objects(version, WG.corroboratedBy)
    assert (activity, PROV.wasAssociatedWith, iri("agent", "registrar")) in graph
    assert (activity, PROV.used, iri("source", "registry")) in graph
    [confidence] = graph.objects(activity, WG.corroboratedConfidence)
    assert isinstance(confidence, Literal)
    assert float(confidence) == pytest.approx(BOTH)
    rel = relationship_iri('(Person{"name":"Alice"})-[KNOWS]->(Person{"name":"Bob"})')
    assert len(set(graph.objects(rel + "/v1", WG.corroboratedBy))) == 1
