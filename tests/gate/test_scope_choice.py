"""A write chooses its node's scope where the label allows several, on SQLite and on
PostgreSQL: the label's ``scope`` is the default, a scope it does not allow is refused
naming those it does, a node keeps its scope until a write names another, and a move
takes its words and relationships with it, now and in a read of the past."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT
from tests.gate.scoped import WRITE
from writegate.eventlog import Event
from writegate.gate import Gate, Rejected
from writegate.gate.scopes import Scopes
from writegate.language import node_identity

SCHEMA: dict[str, Any] = {
    "name": "chosen",
    "nodes": {
        "Note": {"merge_keys": ["name"], "scope": "a", "scopes": ["a", "b"]},
        "Alpha": {"merge_keys": ["name"], "scope": "a"},
    },
    "relationships": {"LINK": {}},
}
NOTE = node_identity("Note", {"name": "memo"})


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


@pytest.fixture
def chosen(db_path: str | Path) -> Any:
    g = Gate.open(db_path, default_actor=AGENT)
    assert g.publish_schema(SCHEMA).status == "published"
    yield g
    g.close()


def note(gate: Gate, **more: Any) -> Any:
    return gate.write_node(
        label="Note", merge_keys={"name": "memo"}, properties={}, **WRITE, **more
    )


def scope_now(gate: Gate, identity: str = NOTE) -> str:
    with gate.log.snapshot() as conn:
        row = conn.execute("SELECT scope FROM state_nodes WHERE identity = ?", (identity,))
        return str(row.fetchone()[0])


def last_node_event(gate: Gate) -> Event:
    return [e for e in gate.log.iter_events() if e.type == "node.written"][-1]


def only(*scopes: str) -> Scopes:
    return Scopes(granted=frozenset(scopes))


def test_a_schema_whose_scope_is_not_among_its_scopes_is_refused(chosen: Gate) -> None:
    bad = {"name": "bad", "nodes": {"Note": {"merge_keys": ["name"], "scope": "c",
                                             "scopes": ["a", "b"]}}}  # fmt: skip
    refused = chosen.publish_schema(bad)
    assert isinstance(refused, Rejected)
    assert refused.error_code == "SCHEMA_INVALID"
    assert "scope 'c' must be one of scopes" in refused.message


def test_a_write_names_one_of_the_scopes_its_label_allows(chosen: Gate) -> None:
    assert note(chosen).status == "written"
    assert scope_now(chosen) == "a"
    refused = note(chosen, scope="c")
    assert isinstance(refused, Rejected)
    assert refused.error_code == "INVALID_ARGUMENT"
    assert "a, b" in refused.message
    assert refused.details["allowed"] == ["a", "b"]
    fixed = chosen.write_node(
        label="Alpha", merge_keys={"name": "x"}, properties={}, scope="b", **WRITE
    )
    assert isinstance(fixed, Rejected)
    assert fixed.details["allowed"] == ["a"]
    item = {"op": "write_node", "label": "Note", "merge_keys": {"name": "other"}, "scope": "b"}
    batch = chosen.write_batch(items=[{**item, **WRITE}])
    assert batch.status == "written", batch
    assert scope_now(chosen, node_identity("Note", {"name": "other"})) == "b"


def test_a_node_keeps_its_scope_until_a_write_names_another(chosen: Gate) -> None:
    assert note(chosen, scope="b").status == "written"
    kept = chosen.write_node(
        label="Note", merge_keys={"name": "memo"}, properties={"said": "kept"}, **WRITE
    )
    assert kept.status == "written", kept
    assert scope_now(chosen) == "b"
    assert last_node_event(chosen).payload.get("moved_from") is None
    assert note(chosen, scope="a").status == "written"
    assert scope_now(chosen) == "a"
    moved = last_node_event(chosen)
    assert (moved.payload["scope"], moved.payload["moved_from"]) == ("a", "b")
    assert only("a").refused([moved]) == ["b"]  # moving needs the scope it leaves too
    conn = chosen.log.connection()
    assert chosen.state.equals_replay(chosen.log, conn)


def test_a_moved_node_takes_its_words_and_relationships_with_it(chosen: Gate) -> None:
    note(chosen, scope="b")
    assert (
        chosen.write_node(label="Alpha", merge_keys={"name": "x"}, properties={}, **WRITE).status
        == "written"
    )
    linked = chosen.write_relationship(
        type="LINK", from_label="Alpha", from_keys={"name": "x"},
        to_label="Note", to_keys={"name": "memo"}, **WRITE,
    )  # fmt: skip
    assert linked.status == "written", linked
    before = datetime.now(UTC)
    a, b = chosen.reader(scopes=only("a")), chosen.reader(scopes=only("b"))
    assert a.search_nodes("memo").nodes == []
    assert a.search_nodes("x").withheld == {"b": 1}
    assert note(chosen, scope="a").status == "written"
    assert [n.merge_keys["name"] for n in a.search_nodes("memo").nodes] == ["memo", "x"]
    assert b.search_nodes("memo").nodes == []
    assert len(a.graph_query("LINK memo").triplets) == 1
    conn = chosen.log.connection()
    documents = {d.kind: d for d in chosen.state.text_index(conn).documents(conn)}
    assert (documents["relationship"].scope_from, documents["relationship"].scope_to) == (
        "a",
        "a",
    )
    then = a.open_nodes([{"label": "Alpha", "merge_keys": {"name": "x"}}], as_of=before)
    assert [n.label for n in then.nodes] == ["Alpha"]  # the note was in b then
    assert then.withheld == {"b": 1}
    assert chosen.state.equals_replay(chosen.log, conn)


def test_a_question_about_the_past_finds_a_node_in_the_scope_it_had_then(chosen: Gate) -> None:
    """Kept in b, then moved to a: a question as of before the move finds it for b, not
    for a, and a question about now the other way round (issue 40)."""
    assert note(chosen, scope="b").status == "written"
    before = datetime.now(UTC)
    assert note(chosen, scope="a").status == "written"
    a, b = chosen.reader(scopes=only("a")), chosen.reader(scopes=only("b"))

    def found(reader: Any, **when: Any) -> list[str]:
        return [s.entity for s in reader.graph_query("memo", **when).seeds]

    assert found(b, as_of=before) == [NOTE]
    assert found(a, as_of=before) == []
    assert found(a) == [NOTE]
    assert found(b) == []
