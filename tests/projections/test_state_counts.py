"""The counts of labels, relationship types and stubs are kept as the graph changes, on both
backends: after writes, stubs, deletes, a merge and its undoing they equal a scan of the
tables, and a replay keeps the same rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES
from writegate.eventlog import Actor
from writegate.eventlog.sql import Sql
from writegate.gate import (
    DeleteNodeResult,
    DeleteRelationshipResult,
    Gate,
    WriteNodeResult,
    WriteRelationshipResult,
)
from writegate.gate.merges.operations import MergeResult, UnmergeResult
from writegate.projections.state import StateCounts, StateProjection, tallies
from writegate.projections.state.tables import COUNTS_LAYOUT

STATE = StateProjection()


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=Actor(agent="a")) as g:
        document = yaml.safe_load((FIXTURES / "conflict_schema.yaml").read_text())
        assert g.publish_schema(document).status == "published"
        yield g


def node(gate: Gate, label: str, name: str, **properties: Any) -> None:
    out = gate.write_node(
        label=label,
        merge_keys={"name": name},
        properties=properties,
        source="s",
        extraction_method="api",
    )
    assert isinstance(out, WriteNodeResult), out


def edge(gate: Gate, rtype: str, start: str, end: str) -> None:
    out = gate.write_relationship(
        type=rtype,
        from_label="Person",
        from_keys={"name": start},
        to_label="Organization" if rtype == "WORKS_FOR" else "Person",
        to_keys={"name": end},
        source="s",
        extraction_method="api",
        endpoint_policy="merge_endpoints",
    )
    assert isinstance(out, WriteRelationshipResult), out


def scanned(conn: Sql) -> StateCounts:
    return StateCounts(*tallies.scanned(conn))


def test_counts_equal_a_scan_after_writes_stubs_deletes_and_a_merge_undone(gate: Gate) -> None:
    conn = gate.log.connection()
    node(gate, "Person", "Alan Turing", city="London")
    node(gate, "Person", "alan turing", city="Bletchley")
    node(gate, "Person", "Bob")
    edge(gate, "KNOWS", "Alan Turing", "Bob")
    edge(gate, "KNOWS", "alan turing", "Bob")
    edge(gate, "KNOWS", "Bob", "Carol")  # Carol: a stub
    edge(gate, "WORKS_FOR", "alan turing", "GC&CS")  # GC&CS: a stub
    edge(gate, "WORKS_FOR", "Bob", "Post Office")  # another
    assert STATE.counts(conn) == scanned(conn)
    assert STATE.counts(conn) == StateCounts(
        {"Organization": 2, "Person": 4}, {"KNOWS": 3, "WORKS_FOR": 2}, 3
    )
    node(gate, "Organization", "GC&CS")  # a stub written as a node: no longer one
    node(gate, "Person", "Alan Turing", city="Manchester")  # an update counts nothing new
    assert STATE.counts(conn).stubs == 2
    merged = gate.merge_nodes(
        label="Person",
        survivor_keys={"name": "Alan Turing"},
        duplicate_keys={"name": "alan turing"},
        source="review",
        extraction_method="manual",
    )
    assert isinstance(merged, MergeResult), merged
    assert STATE.counts(conn) == scanned(conn)
    assert STATE.counts(conn).labels == {"Organization": 2, "Person": 3}
    gone = gate.delete_relationship(
        type="KNOWS",
        from_label="Person",
        from_keys={"name": "Bob"},
        to_label="Person",
        to_keys={"name": "Carol"},
        source="s",
        extraction_method="api",
    )
    assert isinstance(gone, DeleteRelationshipResult), gone
    deleted = gate.delete_node(
        label="Organization", merge_keys={"name": "Post Office"}, source="s",
        extraction_method="api", detach=True,
    )  # fmt: skip
    assert isinstance(deleted, DeleteNodeResult), deleted
    assert STATE.counts(conn) == scanned(conn)
    undone = gate.unmerge_nodes(merge=merged.merge, source="review", extraction_method="manual")
    assert isinstance(undone, UnmergeResult), undone
    assert STATE.counts(conn) == scanned(conn)
    assert STATE.counts(conn) == StateCounts(
        {"Organization": 1, "Person": 4}, {"KNOWS": 2, "WORKS_FOR": 1}, 1
    )
    assert STATE.equals_replay(gate.log, conn)
    assert gate.verify().ok


def test_a_label_deleted_to_its_last_node_leaves_no_row(gate: Gate) -> None:
    conn = gate.log.connection()
    node(gate, "Organization", "Acme")
    deleted = gate.delete_node(
        label="Organization", merge_keys={"name": "Acme"}, source="s", extraction_method="api"
    )
    assert isinstance(deleted, DeleteNodeResult), deleted
    assert STATE.counts(conn) == StateCounts({}, {}, 0) == scanned(conn)
    assert STATE.equals_replay(gate.log, conn)


def test_a_read_only_copy_from_before_the_counts_were_kept_is_counted_by_a_scan() -> None:

    conn = sqlite3.connect(":memory:", isolation_level=None)
    STATE.install(conn)
    conn.execute(
        "INSERT INTO state_nodes (identity, label, keys, properties, provenance, version, stub, "
        "created_seq, updated_seq, updated_at, updated_by) "
        "VALUES ('Person{}', 'Person', '{}', '{}', 'null', 1, 1, 1, 1, 't', 'a')"
    )
    assert STATE.counts(conn) == StateCounts({}, {}, 0)  # kept: nothing counted it
    conn.execute(
        "UPDATE projection_checkpoints SET seq = ? WHERE name = 'state.layout'",
        (COUNTS_LAYOUT - 1,),
    )
    assert STATE.counts(conn) == StateCounts({"Person": 1}, {}, 1)
    conn.close()
