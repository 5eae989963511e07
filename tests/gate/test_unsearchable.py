"""A property the schema keeps out of the text index (``searchable: false``), on both
backends: no search or query meets its words, before or after the publish that says so, a
merge and an unmerge keep it out, a replay makes the same index, and the schema refuses it
where it cannot hold (a merge key, a relationship's property)."""

from __future__ import annotations

import copy
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import AGENT, FIXTURES
from tests.projections.node_text_layout import layout_20
from tests.readme import blocks, section
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.schema.document import parse_document
from writegate.gate.schema.registry import describe_registry
from writegate.language import LabelSearchable, payload_of
from writegate.projections.state.tables import LAYOUT, LAYOUT_MARK

CLAIM: dict[str, Any] = {"source": "crm.csv", "extraction_method": "parsed"}
OPEN: dict[str, Any] = {
    "nodes": {
        "Person": {
            "merge_keys": ["id"],
            "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
        },
        "Team": {"merge_keys": ["name"], "properties": {"name": {"type": "string"}}},
    },
    "relationships": {"MEMBER_OF": {"from": ["Person"], "to": ["Team"]}},
}


def keeping_out(*names: str, document: dict[str, Any] = OPEN) -> dict[str, Any]:
    doc = copy.deepcopy(document)
    props = doc["nodes"]["Person"]["properties"]
    for name in names:
        props[name] = {"type": "string", "searchable": False}
    return doc


def person(gate: Gate, pid: str, **properties: Any) -> None:
    out = gate.write_node(label="Person", merge_keys={"id": pid}, properties=properties, **CLAIM)
    assert isinstance(out, WriteNodeResult), out


def found(gate: Gate, query: str) -> list[str]:
    """The ids of the people ``search_nodes`` finds for ``query`` (not their neighbours)."""
    nodes = gate.reader().search_nodes(query, neighbors=0).nodes
    return sorted(n.merge_keys["id"] for n in nodes if n.label == "Person")


def seeds(gate: Gate, query: str) -> list[str]:
    """The ids of the people ``graph_query`` takes as its seeds for ``query``."""
    return sorted(s.node.merge_keys["id"] for s in gate.reader().graph_query(query).seeds)


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=AGENT) as g:
        yield g


def test_a_property_kept_out_is_never_found(gate: Gate) -> None:
    assert gate.publish_schema(keeping_out("notes")).status == "published"
    person(gate, "p1", name="Ada Lovelace", notes="owes money to zanzibar")
    person(gate, "p2", name="Zanzibar Smith")
    assert found(gate, "zanzibar") == ["p2"]
    assert found(gate, "lovelace") == ["p1"]  # the rest of the node is searched
    assert found(gate, "money") == []
    assert seeds(gate, "lovelace") == ["p1"]
    assert seeds(gate, "owes money") == []
    node = gate.reader().open_nodes([{"label": "Person", "merge_keys": {"id": "p1"}}]).nodes[0]
    assert node.properties["notes"] == "owes money to zanzibar"  # kept, only not searched
    described = describe_registry(gate.current_schema().registry)["nodes"]
    assert described["Person"]["properties"]["notes"]["searchable"] is False  # type: ignore[index]
    assert "searchable" not in described["Person"]["properties"]["name"]  # type: ignore[index]
    assert gate.verify().ok


def test_a_publish_takes_the_words_of_nodes_already_written_out_and_back(gate: Gate) -> None:
    assert gate.publish_schema(keeping_out(document=OPEN)).status == "published"
    for n in range(1203):  # more than a page of rows
        person(gate, f"p{n}", name=f"Person Number{n}", notes=f"secret{n} plan")
    assert "p7" in found(gate, "secret7")  # and those its words begin (secret70, ...)
    head = gate.log.head()[0]
    hidden = gate.publish_schema(keeping_out("notes"))
    assert getattr(hidden, "reworded", None) == ["Person"]
    events = gate.log.read(after_seq=head, limit=100).events
    said = [p for e in events if isinstance(p := payload_of(e), LabelSearchable)]
    assert [(s.label, s.unsearchable) for s in said] == [("Person", ["notes"])]
    assert found(gate, "secret7") == []
    assert found(gate, "plan") == []
    assert found(gate, "number1202") == ["p1202"]
    assert gate.verify().ok  # a replay makes the same documents
    person(gate, "p7", notes="secret7 changed")  # a later write keeps it out
    assert found(gate, "secret7") == []
    shown = gate.publish_schema(OPEN)  # and back in
    assert getattr(shown, "reworded", None) == ["Person"]
    assert found(gate, "secret7")[:1] == ["p7"]
    assert "p8" in found(gate, "secret8")
    assert gate.verify().ok


def test_a_new_node_of_a_label_keeping_a_property_out_keeps_it_out(gate: Gate) -> None:
    assert gate.publish_schema(keeping_out("notes")).status == "published"
    out = gate.write_relationship(
        type="MEMBER_OF",
        from_label="Person",
        from_keys={"id": "p9"},
        to_label="Team",
        to_keys={"name": "Core"},
        endpoint_policy="merge_endpoints",
        **CLAIM,
    )
    assert not isinstance(out, Rejected), out  # p9 is a stub: its row lists nothing yet
    person(gate, "p9", notes="hidden words")  # the stub's first write lists it
    assert found(gate, "hidden") == []
    assert found(gate, "p9") == ["p9"]


def test_a_merge_and_its_undoing_keep_it_out(gate: Gate) -> None:
    assert gate.publish_schema(keeping_out("notes")).status == "published"
    person(gate, "a", name="Grace Hopper", notes="alpha words")
    person(gate, "b", name="Grace Hopper", notes="bravo words")
    merged = gate.merge_nodes(
        label="Person", survivor_keys={"id": "a"}, duplicate_keys={"id": "b"}, **CLAIM
    )
    assert not isinstance(merged, Rejected), merged
    assert found(gate, "bravo") == []
    assert found(gate, "alpha") == []
    undone = gate.unmerge_nodes(merge=merged.merge, **CLAIM)
    assert not isinstance(undone, Rejected), undone
    assert found(gate, "hopper") == ["a", "b"]
    assert found(gate, "bravo") == []  # the node given back keeps it out too
    assert gate.verify().ok


@pytest.mark.parametrize(
    ("where", "said"),
    [
        (["nodes", "Person", "properties", "id"], "merge key 'id' must stay searchable"),
        (
            ["relationships", "MEMBER_OF", "properties", "role"],
            "only a node's properties may leave the text index",
        ),
    ],
)
def test_the_schema_refuses_it_where_it_cannot_hold(
    gate: Gate, where: list[str], said: str
) -> None:
    doc = copy.deepcopy(OPEN)
    at = doc
    for step in where[:-1]:
        at = at.setdefault(step, {})
    at[where[-1]] = {"type": "string", "searchable": False}
    out = gate.publish_schema(doc)
    assert isinstance(out, Rejected), out
    assert out.error_code == "SCHEMA_INVALID"
    assert said in out.message


def test_a_schema_that_keeps_everything_searchable_keeps_its_version() -> None:
    plain = parse_document(copy.deepcopy(OPEN))
    said = copy.deepcopy(OPEN)
    said["nodes"]["Person"]["properties"]["name"]["searchable"] = True
    assert parse_document(said).version() == plain.version()
    assert parse_document(keeping_out("notes")).version() != plain.version()


def layout_19(path: Path, *changes: str) -> None:
    """A log of one person whose read model is as layout 19 left it (and ``changes``)."""
    with Gate.open(path, default_actor=AGENT) as gate:
        assert gate.publish_schema(OPEN).status == "published"
        person(gate, "p1", name="Ada Lovelace")
    layout_20(path)
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("ALTER TABLE state_nodes DROP COLUMN unsearchable")
    old.execute("UPDATE projection_checkpoints SET seq = 19 WHERE name = ?", (LAYOUT_MARK,))
    for change in changes:
        old.execute(change)
    old.close()


def test_a_read_model_of_the_layout_before_gains_the_column_without_a_rebuild(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.db"
    layout_19(path, "UPDATE state_nodes SET updated_by = 'marked'")  # a rebuild would undo it
    with Gate.open(path, default_actor=AGENT) as gate:
        conn = gate.log.connection()
        assert conn.execute("SELECT DISTINCT updated_by FROM state_nodes").fetchall() == [
            ("marked",)
        ]
        assert gate.publish_schema(keeping_out("notes")).status == "published"
        person(gate, "p2", name="Alan Turing", notes="enigma")
        assert found(gate, "enigma") == []
        assert found(gate, "turing") == ["p2"]
        layout = "SELECT seq FROM projection_checkpoints WHERE name = ?"
        assert conn.execute(layout, (LAYOUT_MARK,)).fetchone() == (LAYOUT,)


def test_a_forgotten_person_is_made_again_keeping_out_what_the_label_does_now(
    gate: Gate,
) -> None:
    personal = yaml.safe_load((FIXTURES / "personal_schema.yaml").read_text())
    assert gate.publish_schema(personal).status == "published"
    out = gate.write_node(
        label="Person",
        merge_keys={"name": "Ada Lovelace"},
        properties={"role": "engineer"},
        **CLAIM,
    )
    assert isinstance(out, WriteNodeResult), out
    personal["nodes"]["Person"]["properties"]["role"]["searchable"] = False
    assert gate.publish_schema(personal).status == "published"
    assert gate.reader().search_nodes("engineer").nodes == []
    done = gate.forget("Person", {"name": "Ada Lovelace"}, reason="asked")
    assert not isinstance(done, Rejected), done
    # made again from its own events, written while its role was searched
    assert gate.reader().search_nodes("engineer").nodes == []
    assert gate.verify().ok


def test_the_guides_example_keeps_the_notes_out(gate: Gate) -> None:
    [text] = blocks(section("### Keeping a property out of search"), "yaml")
    assert gate.publish_schema(yaml.safe_load(text)).status == "published"
    out = gate.write_node(
        label="Customer",
        merge_keys={"email": "ada@example.org"},
        properties={"notes": "prefers the overnight courier"},
        **CLAIM,
    )
    assert isinstance(out, WriteNodeResult), out
    assert gate.reader().search_nodes("courier").nodes == []
    assert [n.label for n in gate.reader().search_nodes("ada").nodes] == ["Customer"]


def test_a_read_only_log_of_the_layout_before_still_verifies(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    layout_19(path)
    with Gate.open(path, readonly=True) as gate:  # compared on the columns it has
        report = gate.verify()
        assert report.ok, report.checks
