"""PROV-O carries observations: each is an entity holding its text, from its source, said
at its time, and every version a citing write made was derived from it — asked in SPARQL
of the file parsed back, as an auditor would."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import PROV

from tests.conftest import person, relationship
from tests.documents import document
from writegate.gate import Gate, ObservationResult
from writegate.language import node_identity, relationship_identity
from writegate.projections.prov import WG, ProvProjector, iri, node_iri, relationship_iri

DATE_TIME = URIRef("http://www.w3.org/2001/XMLSchema#dateTime")
TEXT = 'Alice: "I\'ve known Bob since school."\nBob: "True."'


def _graph(gate: Gate, path: Path) -> Graph:
    projector = ProvProjector(path, log=gate.log)
    projector.apply(list(gate.log.iter_events()))
    return projector.graph()


def test_each_version_a_citing_write_made_was_derived_from_the_observation(
    gate: Gate, tmp_path: Path
) -> None:
    kept = gate.record_observation(
        text=TEXT,
        source="transcript:12",
        extraction_method="llm",
        said_at=datetime(2024, 2, 3, 4, 5, 6, tzinfo=UTC),
        session="call-3",
    )
    assert isinstance(kept, ObservationResult)
    gate.write_node(**person(observations=[kept.observation_id]))
    gate.write_node(**person(properties={"age": 31}))  # cites nothing
    gate.write_relationship(
        **relationship(endpoint_policy="merge_endpoints", observations=[kept.observation_id])
    )
    graph = _graph(gate, tmp_path / "prov.nt")
    observation = iri("observation", kept.observation_id)
    alice, bob = (node_identity("Person", {"name": name}) for name in ("Alice", "Bob"))
    derived = {str(s) for s in graph.subjects(PROV.wasDerivedFrom, observation)}
    assert derived == {
        f"{node_iri(alice)}/v1",
        f"{node_iri(bob)}/v1",  # the stub the relationship write created
        f"{relationship_iri(relationship_identity('KNOWS', alice, bob))}/v1",
    }
    assert (URIRef(f"{node_iri(alice)}/v2"), PROV.wasDerivedFrom, observation) not in graph
    assert (observation, PROV.value, Literal(TEXT)) in graph
    assert (observation, PROV.hadPrimarySource, iri("source", "transcript:12")) in graph
    said = Literal("2024-02-03T04:05:06+00:00", datatype=DATE_TIME)
    assert (observation, WG.saidAt, said) in graph
    assert (observation, WG.observationSession, Literal("call-3")) in graph
    [activity] = graph.objects(observation, PROV.wasGeneratedBy)
    assert (activity, WG.eventType, Literal("observation.recorded")) in graph


def test_a_version_citing_a_passage_is_derived_from_it_and_it_quotes_its_document(
    gate: Gate, tmp_path: Path
) -> None:
    text, at = document(100_000)
    kept = gate.record_observation(text=text, source="paste", extraction_method="manual")
    assert isinstance(kept, ObservationResult)
    assert kept.passages is not None
    passage = f"{kept.observation_id}#{max(s for s in kept.passages if s <= at)}"
    gate.write_node(**person(observations=[passage]))
    graph = _graph(gate, tmp_path / "prov.nt")
    quoted, whole = iri("observation", passage), iri("observation", kept.observation_id)
    alice = node_identity("Person", {"name": "Alice"})
    assert {str(s) for s in graph.subjects(PROV.wasDerivedFrom, quoted)} == {
        f"{node_iri(alice)}/v1"
    }
    assert (quoted, PROV.wasQuotedFrom, whole) in graph
    assert (whole, PROV.value, Literal(text)) in graph  # the document, whole, once
