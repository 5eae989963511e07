"""A write reads the rows of the nodes it names once (on PostgreSQL, all of a batch's in one
round trip, then answered from what its transaction read and wrote): a batch that writes
one node several times, links it, resolves a stub, moves a scope or deletes leaves the read
model a replay makes, and a refused batch leaves nothing a later write could see; on SQLite
and on PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT
from tests.gate.scoped import WRITE
from writegate.gate import BatchResult, Gate, Rejected, WriteNodeResult

SCHEMA: dict[str, Any] = {
    "name": "rows",
    "nodes": {
        "Note": {"merge_keys": ["name"], "scope": "a", "scopes": ["a", "b"]},
        "Person": {"merge_keys": ["name"]},
    },
    "relationships": {"LINK": {}},
}


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


@pytest.fixture
def gate(db_path: str | Path) -> Any:
    g = Gate.open(db_path, default_actor=AGENT)
    assert g.publish_schema(SCHEMA).status == "published"
    yield g
    g.close()


def node(label: str, name: str, **more: Any) -> dict[str, Any]:
    return {"op": "write_node", "label": label, "merge_keys": {"name": name}, **WRITE, **more}


def link(start: str, end: str) -> dict[str, Any]:
    return {
        "op": "write_relationship",
        "type": "LINK",
        "from_label": "Person",
        "from_keys": {"name": start},
        "to_label": "Person",
        "to_keys": {"name": end},
        "endpoint_policy": "merge_endpoints",
        **WRITE,
    }


def replayed(gate: Gate) -> bool:
    with gate.log.snapshot() as conn:
        return gate.state.equals_replay(gate.log, conn)


def test_a_batch_writing_one_node_again_and_again_leaves_what_a_replay_makes(gate: Gate) -> None:
    result = gate.write_batch(
        items=[
            node("Person", "Ada", properties={"age": 1}),
            node("Person", "Ada", properties={"age": 2, "city": "London"}),
            link("Ada", "Grace"),  # Grace: a stub
            node("Person", "Grace", properties={"age": 3}),  # the stub resolved
            node("Person", "Ada", properties={"city": None}),
        ]
    )
    assert isinstance(result, BatchResult), result
    conn = gate.log.connection()
    ada = gate.state.node(conn, 'Person{"name":"Ada"}')
    grace = gate.state.node(conn, 'Person{"name":"Grace"}')
    assert ada is not None
    assert (ada.properties, ada.version) == ({"name": "Ada", "age": 2}, 3)
    assert grace is not None
    assert (grace.stub, grace.properties["age"]) == (False, 3)
    assert gate.state.counts(conn).labels == {"Person": 2}
    assert gate.state.counts(conn).stubs == 0
    assert replayed(gate)


def test_a_node_written_deleted_and_written_again_in_one_batch_is_there_once(gate: Gate) -> None:
    gate.write_batch(items=[node("Person", "Ada"), link("Ada", "Alan")])
    result = gate.write_batch(
        items=[
            {"op": "delete_node", "label": "Person", "merge_keys": {"name": "Ada"}, **WRITE}
            | {"detach": True},
            node("Person", "Ada", properties={"age": 9}),
        ]
    )
    assert isinstance(result, BatchResult), result
    conn = gate.log.connection()
    ada = gate.state.node(conn, 'Person{"name":"Ada"}')
    assert ada is not None
    assert ada.properties == {"name": "Ada", "age": 9}
    assert gate.state.relationships_of(conn, 'Person{"name":"Ada"}') == []
    assert replayed(gate)


def test_a_scope_moved_in_a_batch_moves_the_words_of_its_relationships(gate: Gate) -> None:
    gate.write_node(label="Note", merge_keys={"name": "memo"}, **WRITE)
    result = gate.write_batch(
        items=[
            node("Note", "memo", properties={"text": "moved"}, scope="b"),
            node("Note", "memo", properties={"text": "moved again"}),
        ]
    )
    assert isinstance(result, BatchResult), result
    conn = gate.log.connection()
    documents = gate.state.text_index(conn).documents_of(conn, ['Note{"name":"memo"}'])
    assert [(d.scope_from, d.text.split("\n")[-1]) for d in documents] == [("b", "moved again")]
    assert replayed(gate)


def test_a_refused_batch_leaves_nothing_the_next_write_sees(gate: Gate) -> None:
    refused = gate.write_batch(
        items=[
            node("Person", "Ada", properties={"age": 1}),
            node("Person", "Ada", properties={"age": 2}, create_only=True),  # Ada exists now
        ]
    )
    assert isinstance(refused, Rejected)
    assert refused.error_code == "NODE_ALREADY_EXISTS"
    written = gate.write_node(label="Person", merge_keys={"name": "Ada"}, **WRITE)
    assert isinstance(written, WriteNodeResult)
    assert written.created
    conn = gate.log.connection()
    assert gate.state.counts(conn).labels == {"Person": 1}
    assert replayed(gate)


def test_a_node_write_asks_no_document_of_the_text_index(tmp_path: Path) -> None:
    """On SQLite a node's row is its document (``nodetext``): a write that creates it and a
    later one alike ask the index nothing, the row they read says its scope before (a move
    still takes its relationships' words along: ``test_a_scope_moved_in_a_batch...``)."""
    with Gate.open(tmp_path / "log.db", default_actor=AGENT) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        asked: list[str] = []
        conn = gate.log.connection()
        assert isinstance(conn, sqlite3.Connection)
        conn.set_trace_callback(asked.append)
        created = gate.write_node(label="Note", merge_keys={"name": "memo"}, **WRITE)
        assert isinstance(created, WriteNodeResult)
        assert created.created
        assert not [sql for sql in asked if sql.startswith("SELECT") and "search_doc" in sql]
        assert gate.write_batch(items=[link("Ada", "Alan")]).status == "written"
        asked.clear()
        assert gate.write_node(label="Person", merge_keys={"name": "Ada"}, **WRITE).status
        assert any(sql.startswith("INSERT INTO state_nodes") for sql in asked)
        assert not [sql for sql in asked if sql.startswith("SELECT") and "_doc" in sql]
        assert replayed(gate)
