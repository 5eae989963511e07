"""The PROV-O export answers an auditor's questions, in SPARQL, after parsing it back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rdflib import Graph, Literal
from rdflib.namespace import PROV, RDFS

from tests.projections import prov_reference
from tests.projections.history import CLASHES, COMMON, clashing_log
from writegate.eventlog import Actor, Event, EventCore
from writegate.gate import Gate
from writegate.gate.models import ProposedResult
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


def test_the_lines_are_those_the_rdflib_mapping_wrote(tmp_path: Path, events: list[Event]) -> None:
    """Written as text now: the same bytes as rdflib's terms, so the same graph."""
    projector = ProvProjector(tmp_path / "prov.nt")
    for start in range(0, len(events), 4):
        projector.apply(events[start : start + 4])
    written = (tmp_path / "prov.nt").read_bytes()
    assert written == prov_reference.lines(events)
    reference = Graph().parse(data=prov_reference.lines(events).decode(), format="nt")
    assert projector.graph().isomorphic(reference)


def test_odd_values_are_written_as_rdflib_wrote_them(tmp_path: Path) -> None:
    """Quotes, backslashes, non-ASCII names, several keys, stubs, a session, a deletion."""
    with Gate.open(tmp_path / "odd.db", default_actor=Actor(agent='ag"ent\\ ü')) as gate:
        clashing_log(gate)
        written = gate.write_node(
            label="Tag",
            merge_keys={"slug": 'tab\there, cr\r, quote" ☃'},
            actor=Actor(agent="other", session="sess/1 ?#"),
            source="file:///a b.csv",
            extraction_method="llm",
            reliability=0.3,
        )
        assert written.status == "written", written
        events = list(gate.log.iter_replayed())
    projector = ProvProjector(tmp_path / "prov.nt")
    projector.apply(events)
    assert (tmp_path / "prov.nt").read_bytes() == prov_reference.lines(events)


def test_a_line_break_is_escaped_so_the_file_still_parses(tmp_path: Path) -> None:
    """rdflib's ``n3()`` writes Turtle's triple quotes, which N-Triples lacks."""
    with Gate.open(tmp_path / "nl.db", default_actor=Actor(agent="a")) as gate:
        gate.publish_schema(CLASHES)
        claim = {**COMMON, "source": "a\nb"}
        assert gate.write_node(label="Tag", merge_keys={"slug": "x"}, **claim).status == "written"
        events = list(gate.log.iter_replayed())
    ProvProjector(tmp_path / "prov.nt").apply(events)
    graph = Graph().parse(tmp_path / "prov.nt", format="nt")
    assert Literal("a\nb") in set(graph.objects(None, RDFS.label))


def test_opening_reads_the_declared_list_not_the_file(tmp_path: Path, events: list[Event]) -> None:
    """Which agents, gates and sources the file already types is kept in a short list: a
    reopened projection does not type them again, and never reads the triples to know."""
    path = tmp_path / "prov.nt"
    ProvProjector(path).apply(events[:5])
    kept = path.read_bytes()
    path.write_bytes(b"#" * len(kept))  # same length, no typing left in it to find
    ProvProjector(path).apply(events[5:])
    appended = path.read_bytes()[len(kept) :]
    assert appended == prov_reference.lines(events)[len(kept) :]


def test_a_file_without_the_list_is_read_once(tmp_path: Path, events: list[Event]) -> None:
    """A projection written before the list was kept: opening scans the file for it."""
    path = tmp_path / "prov.nt"
    ProvProjector(path).apply(events[:5])
    meta = path.with_name("prov.nt.checkpoint.json")
    older = json.loads(meta.read_text())
    del older["declared"]
    meta.write_text(json.dumps(older))
    path.with_name("prov.nt.declared").unlink()
    ProvProjector(path).apply(events[5:])
    assert path.read_bytes() == prov_reference.lines(events)
    assert "declared" in json.loads(meta.read_text())


REVIEWED = {
    "nodes": {"Person": {"merge_keys": ["name"], "review_below": 0.5}},
}


def chat_person(gate: Gate, name: str, reliability: float = 0.5) -> object:
    """An llm claim: confidence 0.6 x reliability (below the floor at 0.5)."""
    return gate.write_node(
        label="Person",
        merge_keys={"name": name},
        source="chat",
        extraction_method="llm",
        reliability=reliability,
    )


def test_a_held_write_changes_no_projection_until_approved(tmp_path: Path) -> None:
    """A proposal and its rejection leave PROV-O (and the JSONL snapshot) as they were; an
    approval applies the write as its writer's, informed by the reviewer's decision."""
    with Gate.open(tmp_path / "log.db", default_actor=Actor(agent="chat-agent")) as gate:
        gate.publish_schema(REVIEWED)
        chat_person(gate, "Ada", 1.0)
        before = list(gate.log.iter_replayed())
        rejected, approved = chat_person(gate, "Eve"), chat_person(gate, "Bob")
        assert isinstance(rejected, ProposedResult)
        assert isinstance(approved, ProposedResult)
        reviewer = Actor(agent="rev-1")
        assert gate.reviews.decide(rejected.proposal, "reject", reviewer).status == "decided"
        held = list(gate.log.iter_replayed())
        assert gate.reviews.decide(approved.proposal, "approve", reviewer).status == "decided"
        every = list(gate.log.iter_replayed())

    def projected(events: list[EventCore], name: str, size: int) -> bytes:
        path = tmp_path / f"{name}.nt"
        projector = ProvProjector(path)
        for start in range(0, len(events), size):
            projector = ProvProjector(path)  # a restart between any two batches
            projector.apply(events[start : start + size])
        return path.read_bytes()

    assert projected(held, "held", 100) == projected(before, "before", 100)  # no trace
    whole = projected(every, "whole", 100)
    assert projected(every, "one-by-one", 1) == whole
    graph = Graph().parse(data=whole.decode(), format="nt")
    rows = list(
        graph.query(
            PREFIXES
            + """
            SELECT ?writer ?reviewer ?proposal WHERE {
                ?v prov:specializationOf ?node ; prov:wasGeneratedBy ?write .
                ?write prov:wasAssociatedWith ?w ; prov:wasInformedBy ?decision .
                ?w a prov:Agent ; rdfs:label ?writer .
                ?decision prov:wasAssociatedWith ?r ; wg:proposal ?proposal .
                ?r rdfs:label ?reviewer .
            }
            """,
            initBindings={"node": node_iri(node_identity("Person", {"name": "Bob"}))},
        )
    )
    assert [(str(r.writer), str(r.reviewer), str(r.proposal)) for r in rows] == [  # type: ignore[union-attr]
        ("chat-agent", "rev-1", approved.proposal)
    ]
    assert "Eve" not in whole.decode()
