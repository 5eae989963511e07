"""On SQLite an append's transaction keeps the rows it has read, as PostgreSQL's does: a
node write asks for its node's row once, though its checks, the state's update, its scope
and its text each want it, and nothing is kept once its transaction has ended; a lone
write opens no savepoint, and a refused one leaves nothing. Counted from SQLite's own
trace of the statements run, on a real file."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import person
from writegate.eventlog.sql import SqliteConnection
from writegate.gate import Gate, Rejected
from writegate.language import node_identity
from writegate.projections.state.remembered import Seen

NODE_ROW = re.compile(r"^SELECT .* FROM state_nodes WHERE identity = ")


def age(gate: Gate, name: str) -> Any:
    row = gate.state.node(gate.log.connection(), node_identity("Person", {"name": name}))
    assert row is not None
    return row.properties["age"]


def traced(gate: Gate, write: Callable[[], object]) -> list[str]:
    said: list[str] = []
    conn = gate.log.connection()
    assert isinstance(conn, sqlite3.Connection)
    conn.set_trace_callback(said.append)
    try:
        write()
    finally:
        conn.set_trace_callback(None)
    return said


@pytest.mark.parametrize("name", ["Ada", "Bob"])  # a node created, a node written again
def test_a_node_write_reads_its_row_once(gate: Gate, name: str) -> None:
    gate.write_node(**person("Bob"))
    said = traced(gate, lambda: gate.write_node(**person(name, properties={"age": 36})))
    assert len([s for s in said if NODE_ROW.match(s)]) == 1, said
    assert not any(s.startswith("SAVEPOINT") for s in said), said
    assert age(gate, name) == 36


def test_rows_are_kept_only_while_the_transaction_is_open(gate: Gate) -> None:
    """A transaction SQLite ended itself (it rolls one back on a full disk or an I/O
    error, with no ``ROLLBACK`` sent) leaves nothing kept for the reads after it."""
    conn = gate.log.connection()
    assert isinstance(conn, SqliteConnection)
    conn.execute("BEGIN IMMEDIATE")
    conn.keep()
    assert conn.remembered(Seen) is not None
    sqlite3.Connection.execute(conn, "ROLLBACK")  # not through the connection's own words
    assert conn.remembered(Seen) is None


def test_a_refused_lone_write_leaves_nothing_and_the_next_reads_afresh(gate: Gate) -> None:
    gate.write_node(**person("Cy"))
    head = gate.log.head()
    refused = gate.write_node(**person("Cy", properties={"age": "thirty"}))
    assert isinstance(refused, Rejected), refused
    assert gate.log.head() == head
    said = traced(gate, lambda: gate.write_node(**person("Cy", properties={"age": 31})))
    assert len([s for s in said if NODE_ROW.match(s)]) == 1, said
    assert gate.log.head()[0] == head[0] + 1
    assert age(gate, "Cy") == 31
