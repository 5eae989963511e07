"""Evidence fields in entity resolution, on a real log of each backend: agreement weighs by
how rare the agreeing value is in the graph, a disagreeing field vetoes ``auto``, an equal
identity beside another name is only proposed, and a replay counts the values exactly."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.readme import blocks, section
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.resolution.evidence import compare
from writegate.gate.schema import parse_document
from writegate.gate.schema.document import EvidenceDoc
from writegate.projections.state import StateProjection
from writegate.projections.state.tables import LAYOUT, LAYOUT_MARK
from writegate.projections.state.valuecounts import value_counts

SCHEMA: dict[str, Any] = {
    "nodes": {
        "Person": {
            "merge_keys": ["name"],
            "resolution": {
                "policy": "auto",
                "evidence": {
                    "dob": {"compare": "date"},
                    "city": {"compare": "similar"},
                    "postcode": {"compare": "exact"},
                },
            },
        },
        "Resident": {
            "merge_keys": ["name"],
            "resolution": {"policy": "propose", "evidence": {"city": {"compare": "similar"}}},
        },
        "Place": {
            "merge_keys": ["name"],
            "resolution": {
                "policy": "auto",
                "kind": "organisation",
                "identity": ["phone"],
                "evidence": {"city": {"compare": "similar"}},
            },
        },
    }
}


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=Actor(agent="a")) as g:
        assert g.publish_schema(SCHEMA).status == "published"
        yield g


def write(gate: Gate, label: str, name: str, **properties: Any) -> object:
    new, same = properties.pop("new", False), properties.pop("same", False)
    return gate.write_node(
        label=label,
        merge_keys={"name": name},
        properties=properties,
        source="s",
        extraction_method="api",
        resolution="new" if new else "same" if same else None,
    )


def test_an_agreeing_rare_value_outweighs_a_common_one(gate: Gate) -> None:
    for n in range(12):
        write(gate, "Resident", f"Filler Person{n:02d}", city="London", new=True)
    write(gate, "Resident", "Mary Jones", city="London")
    write(gate, "Resident", "Peter Smith", city="Tobermory")
    weights = []
    for name, city in (("Mary Jones", "London"), ("Peter Smith", "Tobermory")):
        out = write(gate, "Resident", name.lower(), city=city)
        assert isinstance(out, Rejected), out
        [candidate] = out.details["candidates"]
        [name_said, city_said] = candidate["evidence"]
        assert name_said["outcome"] == "agree"
        assert (city_said["field"], city_said["outcome"]) == ("city", "agree")
        assert any(r.startswith("city agrees (+") for r in candidate["reasons"])
        weights.append(city_said["weight"])
    assert weights[1] > weights[0] + 3  # one node in Tobermory, thirteen in London


def test_a_disagreeing_date_of_birth_vetoes_auto(gate: Gate) -> None:
    write(gate, "Person", "Alan Turing", dob="1912-06-23", postcode="W9")
    other = write(gate, "Person", "alan turing", dob="1954-06-07", postcode="W9")
    assert isinstance(other, Rejected)
    assert other.error_code == "POSSIBLE_DUPLICATE"
    [candidate] = other.details["candidates"]
    assert any("declared field that disagrees" in r for r in candidate["reasons"])
    said = {e["field"]: e["outcome"] for e in candidate["evidence"]}
    assert said == {"name": "agree", "city": "missing", "dob": "disagree", "postcode": "agree"}
    same = write(gate, "Person", "alan turing", dob="19120623", postcode="W9")
    assert isinstance(same, WriteNodeResult)
    assert same.resolved_from == 'Person{"name":"alan turing"}'
    assert same.merge_keys == {"name": "Alan Turing"}


def test_a_shared_phone_beside_another_name_is_proposed_not_landed(gate: Gate) -> None:
    write(gate, "Place", "Grand Hotel Europa", phone="4312345", city="Vienna")
    out = write(gate, "Place", "Cafe Mozart", phone="4312345", city="Vienna")
    assert isinstance(out, Rejected)
    assert out.error_code == "POSSIBLE_DUPLICATE"
    [candidate] = out.details["candidates"]
    assert candidate["merge_keys"] == {"name": "Grand Hotel Europa"}
    assert candidate["verdict"] == "possible"
    assert any("switchboard" in r for r in candidate["reasons"])
    same = write(gate, "Place", "Grand Hotel Europa Vienna", phone="4312345", city="Wien")
    assert isinstance(same, Rejected)  # a city that disagrees: asked, never landed
    landed = write(gate, "Place", "grand hotel europa", phone="4312345", city="vienna")
    assert isinstance(landed, WriteNodeResult)
    assert landed.merge_keys == {"name": "Grand Hotel Europa"}


def test_a_replay_rebuilds_the_value_counts_exactly(gate: Gate) -> None:
    write(gate, "Person", "Ada Lovelace", city="London", dob="1815-12-10")
    write(gate, "Person", "Charles Babbage", city="London", dob="1791-12-26")
    write(gate, "Person", "Charles Babbage", city="Teignmouth", same=True)  # one London less
    write(gate, "Person", "Mary Somerville", city="Jedburgh")
    gate.delete_node(
        label="Person", merge_keys={"name": "Mary Somerville"}, source="s",
        extraction_method="api",
    )  # fmt: skip
    conn = gate.log.connection()
    counts = value_counts(
        conn,
        ["Person/ev:", "Person/ev:city=london", "Person/ev:city", "Person/ev:city=jedburgh",
         "Person/ev:dob", "Person/name=charles babbage"],
    )  # fmt: skip
    assert counts == {
        "Person/ev:": 2,
        "Person/ev:city=london": 1,
        "Person/ev:city": 2,
        "Person/ev:dob": 2,
        "Person/name=charles babbage": 1,
    }
    assert StateProjection().equals_replay(gate.log, conn)
    assert gate.verify().ok


def test_an_evidence_field_must_be_a_property_of_its_label() -> None:
    document = {
        "nodes": {
            "Person": {
                "merge_keys": ["name"],
                "additional_properties": False,
                "properties": {"name": {"type": "string"}},
                "resolution": {"evidence": {"dob": {"compare": "date"}}},
            }
        }
    }
    with pytest.raises(ValueError, match=r"nodes\.Person") as raised:
        parse_document(document)
    first = str(raised.value).split(";")[0]
    assert "nodes.Person" in first
    assert "evidence field 'dob' is not a property" in first


def test_the_guides_evidence_example_is_a_schema_that_weighs_each_field(tmp_path: Path) -> None:
    [text] = blocks(section("#### Evidence fields"), "yaml")
    document = yaml.safe_load(text)
    resolution = parse_document(document).nodes["Person"].resolution
    assert resolution is not None
    assert resolution.evidence is not None
    kinds = {field: doc.compare for field, doc in resolution.evidence.items()}
    assert kinds == {"dob": "date", "postcode": "exact", "suburb": "similar",
                     "street": "similar", "home": "geo"}  # fmt: skip
    with Gate.open(tmp_path / "log.db", default_actor=Actor(agent="a")) as g:
        assert g.publish_schema(document).status == "published"
        home = {"dob": "1912-06-23", "postcode": "W9", "street": "2 Warrington Crescent"}
        first = g.write_node(
            label="Person",
            merge_keys={"id": "p1"},
            source="s",
            extraction_method="api",
            properties={"name": "Alan Turing", **home},
        )
        moved = {**home, "street": "43 Adlington Road"}  # people move: no veto
        again = g.write_node(
            label="Person",
            merge_keys={"id": "p2"},
            source="s",
            extraction_method="api",
            properties={"name": "Alan Turing", **moved},
        )
    assert isinstance(first, WriteNodeResult)
    assert isinstance(again, WriteNodeResult)
    assert again.merge_keys == {"id": "p1"}
    assert again.resolved_from == 'Person{"id":"p2"}'


def test_a_phone_several_nodes_hold_is_asked_about_never_landed(gate: Gate) -> None:
    write(gate, "Place", "Grand Hotel Europa", phone="4312345")
    write(gate, "Place", "Cafe Mozart", phone="4312345", new=True)
    out = write(gate, "Place", "Blue Bar", phone="4312345")
    assert isinstance(out, Rejected)  # as the name and number alone would ask: never less
    assert {c["verdict"] for c in out.details["candidates"]} == {"possible"}
    assert len(out.details["candidates"]) == 2


@pytest.mark.parametrize(
    ("doc", "a", "b", "outcome"),
    [
        (EvidenceDoc(compare="date"), "1912-06-23", "19120623", "agree"),
        (EvidenceDoc(compare="date"), "1912-06-23", "1912-06-28", "near"),  # a digit's typo
        (EvidenceDoc(compare="date"), "1912-06-03", "1912-03-06", "near"),  # day and month
        (EvidenceDoc(compare="date"), "1912-06-23", "1954-06-07", "disagree"),
        (EvidenceDoc(compare="date", tolerance_days=7), "1912-06-23", "1912-06-28", "agree"),
        (EvidenceDoc(compare="date"), "1994-11-21", "1994-11-71", "near"),  # no day 71: a typo
        (EvidenceDoc(compare="date"), "1949-00-13", "1949-07-13", "near"),  # a month left 00
        (EvidenceDoc(compare="date"), "1950-19-05", "1950-12-05", "near"),  # no month 19
        (EvidenceDoc(compare="date"), "1975-03-12", "1975-03-28", "near"),  # one part mistyped
        (EvidenceDoc(compare="date"), "1975-03-12", "1976-04-12", "disagree"),  # two parts
        (EvidenceDoc(compare="date"), "1994-11-71", "1994-11-71", "agree"),
        (EvidenceDoc(compare="exact"), "2086", "2068", "near"),  # two digits swapped
        (EvidenceDoc(compare="exact"), "nsw", "vic", "disagree"),
        (EvidenceDoc(compare="exact"), "nsw", None, "missing"),
        (EvidenceDoc(compare="similar"), "Los Angeles", "los angles", "near"),
        (EvidenceDoc(compare="similar"), "Los Angeles", "New York", "disagree"),
        (EvidenceDoc(compare="numeric", tolerance=0.01), 51.501, 51.505, "agree"),
        (EvidenceDoc(compare="numeric", tolerance=0.01), 51.5, 51.58, "near"),
        (EvidenceDoc(compare="numeric", tolerance=0.01), 51.5, 48.8, "disagree"),
        (EvidenceDoc(compare="numeric"), 1997, 2000, "disagree"),  # a year: no typo band
        (EvidenceDoc(compare="numeric"), 1997, 1997.0, "agree"),
        (EvidenceDoc(compare="similar"), "VLDB", "Very Large Data Bases", "near"),
        (EvidenceDoc(compare="similar"), "New York City", "NYC", "near"),
        (EvidenceDoc(compare="similar"), "NYC", "Los Angeles", "disagree"),
        # a list in another order (DBLP holds one paper's authors both ways), a surname first
        (EvidenceDoc(compare="similar"), "Gottlob, Koch, Ross", "Ross, Gottlob, Koch", "agree"),
        (EvidenceDoc(compare="similar"), "Smith, John", "John Smith", "agree"),
        (EvidenceDoc(compare="similar"), "Koch, Gottlob, Pichlr", "Pichler, Gottlob, Koch", "near"),
        (EvidenceDoc(compare="similar"), "Atluri, Joshi", "Bernstein, Ross", "disagree"),
    ],
)
def test_each_kind_of_comparison_tells_agreement_a_near_miss_and_disagreement(
    doc: EvidenceDoc, a: object, b: object, outcome: str
) -> None:
    assert compare(doc, a, b) == outcome


def test_evidence_keys_are_counted_not_indexed_and_an_older_index_lets_them_go(
    tmp_path: Path,
) -> None:
    """The probes read a name's rows and identity values only: a node's ``ev:`` keys are
    counted, never indexed, and a read model of layout 21, which indexed them, deletes them
    on a writer's open."""
    path = tmp_path / "log.db"
    with Gate.open(path, default_actor=Actor(agent="a")) as g:
        assert g.publish_schema(SCHEMA).status == "published"
        write(g, "Person", "Ada Lovelace", city="London", dob="1815-12-10")
        conn = g.log.connection()
        rows = [str(k) for (k,) in conn.execute("SELECT key FROM state_resolution_keys")]
        assert rows
        assert not [k for k in rows if "/ev:" in k]
        assert value_counts(conn, ["Person/ev:city=london"]) == {"Person/ev:city=london": 1}
    old = sqlite3.connect(path, isolation_level=None)  # as layout 21 left it
    old.execute(
        "INSERT INTO state_resolution_keys (key, identity) VALUES (?, ?)",
        ("Person/ev:city=london", 'Person{"name":"Ada Lovelace"}'),
    )
    old.execute("UPDATE projection_checkpoints SET seq = 21 WHERE name = ?", (LAYOUT_MARK,))
    old.close()
    with Gate.open(path, default_actor=Actor(agent="a")) as g:
        conn = g.log.connection()
        assert conn.execute(
            "SELECT count(*) FROM state_resolution_keys WHERE key LIKE '%/ev:%'"
        ).fetchone() == (0,)
        assert StateProjection().layout(conn) == LAYOUT
        assert StateProjection().equals_replay(g.log, conn)
