"""Batches, deletions, stubs and updates: the semantics beyond the seed matrix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import person, relationship
from writegate.gate import BatchResult, DeleteNodeResult, Gate, Rejected, dump


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db


DELETE: dict[str, Any] = {"source": "hr-system", "extraction_method": "api"}


def test_batch_items_see_earlier_items_and_commit_together(gate: Gate) -> None:
    result = gate.write_batch(
        items=[
            {"op": "write_node", **person("Alice")},
            {"op": "write_node", **person("Bob")},
            {"op": "write_relationship", **relationship()},
        ]
    )
    assert isinstance(result, BatchResult)
    assert [r.status for r in result.results] == ["written"] * 3
    assert result.last_seq - result.first_seq == 2
    assert dump(result)["results"][2]["from"] == {
        "label": "Person",
        "merge_keys": {"name": "Alice"},
    }


def test_detach_delete_records_each_relationship_then_the_node(gate: Gate) -> None:
    gate.write_node(**person("Alice"))
    gate.write_node(**person("Bob"))
    gate.write_relationship(**relationship())
    result = gate.delete_node(label="Person", merge_keys={"name": "Bob"}, detach=True, **DELETE)
    assert isinstance(result, DeleteNodeResult)
    assert result.relationships_deleted == 1
    tail = gate.log.read(after_seq=result.seq - 2).events
    assert [e.type for e in tail] == ["relationship.deleted", "node.deleted"]
    assert tail[0].payload["cascade_of"] == 'Person{"name":"Bob"}'
    assert all(e.provenance["source"] == "hr-system" for e in tail)  # type: ignore[index]
    conn = gate.log.connection()
    assert gate.state.node(conn, 'Person{"name":"Bob"}') is None
    assert gate.state.relationships_of(conn, 'Person{"name":"Alice"}') == []
    # history keeps everything: Bob's stream still shows his life
    assert gate.log.stream_version('node:Person{"name":"Bob"}') == 2


def test_recreating_a_deleted_node_continues_its_version(gate: Gate) -> None:
    gate.write_node(**person("Alice"))
    gate.delete_node(label="Person", merge_keys={"name": "Alice"}, **DELETE)
    again = gate.write_node(**person("Alice"))
    assert (again.created, again.version) == (True, 3)  # type: ignore[union-attr]


def test_writing_a_stub_resolves_it_and_updates_merge(gate: Gate) -> None:
    gate.write_node(**person("Alice"))
    gate.write_relationship(**relationship(endpoint_policy="merge_endpoints"))
    conn = gate.log.connection()
    assert gate.state.node(conn, 'Person{"name":"Bob"}').stub  # type: ignore[union-attr]
    gate.write_node(**person("Bob", properties={"age": 41}))
    gate.write_node(**person("Bob", properties={"nickname": "B"}))
    bob = gate.state.node(conn, 'Person{"name":"Bob"}')
    assert bob is not None
    assert not bob.stub
    assert bob.version == 3
    assert bob.properties == {"name": "Bob", "age": 41, "nickname": "B"}
    gate.write_node(**person("Bob", properties={"nickname": None}))  # null removes, as in Cypher
    assert gate.state.node(conn, 'Person{"name":"Bob"}').properties == {"name": "Bob", "age": 41}  # type: ignore[union-attr]


def test_required_property_may_come_from_the_stored_node(example_gate: Gate) -> None:
    service: dict[str, Any] = {
        "label": "Service",
        "merge_keys": {"name": "billing"},
        "source": "s",
        "extraction_method": "api",
    }
    missing = example_gate.write_node(**service)
    assert isinstance(missing, Rejected)
    assert missing.details["missing"] == ["tier"]
    assert example_gate.write_node(**service, properties={"tier": 1}).status == "written"
    assert example_gate.write_node(**service, properties={"language": "go"}).status == "written"


def test_state_equals_a_rebuild_after_a_mixed_history(example_gate: Gate) -> None:
    g = example_gate
    g.write_node(
        label="Person",
        merge_keys={"name": "Ann"},
        properties={"role": "engineer"},
        source="s",
        extraction_method="llm",
    )
    g.write_relationship(
        type="EMPLOYED_BY",
        from_label="user",
        from_keys={"name": "Ann"},
        to_label="Company",
        to_keys={"name": "Initech"},
        source="s",
        extraction_method="llm",
        endpoint_policy="merge_endpoints",
    )
    g.write_node(label="Widget", merge_keys={"name": "w"}, source="s", extraction_method="llm")
    g.delete_relationship(
        type="WORKS_FOR",
        from_label="Person",
        from_keys={"name": "Ann"},
        to_label="Organization",
        to_keys={"name": "Initech"},
        **DELETE,
    )
    conn = g.log.connection()
    assert g.state.snapshot(conn) == g.state.rebuilt_snapshot(g.log)
    assert g.verify().ok


def test_create_only_refuses_an_existing_node_but_fills_a_stub(gate: Gate) -> None:
    assert gate.write_node(**person("Alice", create_only=True)).status == "written"
    again = gate.write_node(**person("Alice", properties={"age": 99}, create_only=True))
    assert isinstance(again, Rejected)
    assert again.error_code == "NODE_ALREADY_EXISTS"
    assert again.details == {"label": "Person", "keys": {"name": "Alice"}, "version": 1}
    gate.write_relationship(
        **relationship(to_keys={"name": "Stubby"}, endpoint_policy="merge_endpoints")
    )
    filled = gate.write_node(**person("Stubby", create_only=True))
    assert filled.status == "written"
    assert gate.write_node(**person("Alice", properties={"age": 99})).status == "written"
