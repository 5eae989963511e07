"""The PROV-O export answers an auditor's questions, in SPARQL, after parsing it back."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import Graph
from rdflib.namespace import PROV

from writegate.eventlog import Event
from writegate.language import node_identity
from writegate.projections.prov import WG, ProvProjector, export, node_iri

PREFIXES = f"PREFIX prov: <{PROV}>\nPREFIX wg: <{WG}>\nPREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
ALICE = node_iri(node_identity("Person", {"name": "Alice"}))
DAN = node_iri(node_identity("Person", {"name": "Dan"}))


@pytest.fixture
def graph(tmp_path: Path, events: list[Event]) -> Graph:
    projector = ProvProjector(tmp_path / "prov.nt")
    projector.apply(events)
    return projector.graph()


@pytest.mark.parametrize("fmt", ["turtle", "json-ld", "nt"])
def test_every_format_parses_back_to_the_same_graph(
    tmp_path: Path, events: list[Event], fmt: str
) -> None:
    triples = tmp_path / "prov.nt"
    ProvProjector(triples).apply(events)
    parsed = Graph().parse(data=export(triples, fmt), format=fmt)  # type: ignore[arg-type]
    reference = Graph().parse(triples, format="nt")
    assert len(parsed) == len(reference) > 100
    assert parsed.isomorphic(reference)


def test_who_wrote_a_node_from_which_source_with_what_confidence(graph: Graph) -> None:
    rows = graph.query(
        PREFIXES
        + """
        SELECT ?v ?agent ?source ?confidence ?method WHERE {
            ?v prov:specializationOf ?node ;
               prov:wasAttributedTo ?a ;
               prov:wasGeneratedBy ?act ;
               wg:version ?n ;
               wg:confidence ?confidence ;
               wg:extractionMethod ?method .
            ?a rdfs:label ?agent .
            ?act prov:used ?s . ?s rdfs:label ?source .
        } ORDER BY ?n
        """,
        initBindings={"node": ALICE},
    )
    trail = [(str(r.agent), str(r.source), float(r.confidence), str(r.method)) for r in rows]  # type: ignore[union-attr]
    assert trail == [
        ("ada-bot", "https://example.org/team", pytest.approx(0.9 * 0.85), "parsed"),
        ("ada-bot", "hr.csv", 1.0, "api"),
    ]


def test_every_version_is_derived_from_the_previous_one(graph: Graph) -> None:
    versions = graph.query(PREFIXES + "SELECT ?v ?n WHERE { ?v wg:version ?n . FILTER(?n > 1) }")
    assert len(versions) >= 2
    orphans = graph.query(
        PREFIXES
        + """
        SELECT ?v WHERE {
            ?v wg:version ?n ; prov:specializationOf ?e . FILTER(?n > 1)
            FILTER NOT EXISTS { ?v prov:wasDerivedFrom ?p . ?p prov:specializationOf ?e ;
                                 wg:version ?m . FILTER(?m = ?n - 1) }
        }
        """
    )
    assert list(orphans) == []


def test_a_deletion_invalidates_the_last_version(graph: Graph) -> None:
    rows = list(
        graph.query(
            PREFIXES
            + """
            SELECT ?agent ?when WHERE {
                ?v prov:specializationOf ?node ; prov:wasInvalidatedBy ?act ;
                   prov:invalidatedAtTime ?when .
                ?act prov:wasAssociatedWith ?a . ?a a prov:Agent ; rdfs:label ?agent .
            }
            """,
            initBindings={"node": DAN},
        )
    )
    assert [str(r.agent) for r in rows] == ["ada-bot"]  # type: ignore[union-attr]


def test_the_gate_is_a_software_agent_with_its_version(graph: Graph) -> None:
    rows = list(
        graph.query(
            PREFIXES + "SELECT ?label WHERE { ?g a prov:SoftwareAgent ; rdfs:label ?label }"
        )
    )
    assert [str(r.label) for r in rows] == ["writegate 0.1.0"]  # type: ignore[union-attr]
