"""The vector follower beside a live gate, on both backends: it catches up with writes as
they come, survives a restart, is rebuilt by replay, and no write waits for it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import AGENT, SEED_SCHEMA, person
from tests.projections.hashing_embedder import HashingEmbedder
from writegate.gate import Gate
from writegate.projections import runner
from writegate.projections.vectors.projector import VectorProjector


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=AGENT, busy_timeout=2.0) as g:
        assert g.publish_schema(SEED_SCHEMA).status == "published"
        yield g


def vectors(gate: Gate, tmp_path: Path) -> VectorProjector:
    return VectorProjector(gate.log, HashingEmbedder(), path=tmp_path / "vectors.db")


def write(gate: Gate, name: str, **properties: object) -> None:
    result = gate.write_node(**person(name, properties=properties or {"age": 30}))
    assert result.status == "written", result


def test_the_follower_catches_up_with_writes_as_they_come(gate: Gate, tmp_path: Path) -> None:
    follower = vectors(gate, tmp_path)
    stop = threading.Event()
    thread = threading.Thread(
        target=runner.follow,
        args=(gate.log, {"vectors": follower}),
        kwargs={"stop": stop, "interval": 0.05},
    )
    thread.start()
    try:
        for name in ("Alice Smith", "Bob Jones", "Carol Baker"):
            write(gate, name)
        deadline = time.monotonic() + 30
        while follower.checkpoint() < gate.log.head()[0] and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert follower.checkpoint() == gate.log.head()[0]
    reader = vectors(gate, tmp_path)  # another connection, as a server's reader
    assert reader.nearest("carol baker", 1, "node")[0].identity == 'Person{"name":"Carol Baker"}'


def test_the_store_survives_a_restart_and_a_rebuild_equals_it(gate: Gate, tmp_path: Path) -> None:
    write(gate, "Alice Smith")
    follower = vectors(gate, tmp_path)
    runner.replay(gate.log, follower)
    follower.close()
    write(gate, "Bob Jones")
    deleted = gate.delete_node(
        label="Person", merge_keys={"name": "Alice Smith"}, source="s", extraction_method="api"
    )
    assert deleted.status == "deleted", deleted
    again = vectors(gate, tmp_path)
    assert again.checkpoint() > 0
    runner.replay(gate.log, again)
    caught_up = again.snapshot()
    assert [row[0] for row in caught_up] == ['Person{"name":"Bob Jones"}']
    alice = 'Person{"name":"Alice Smith"}'
    assert alice not in {s.identity for s in again.nearest("alice smith", 5, "node")}
    assert again.nearest("bob jones", 5, "node")[0].identity == 'Person{"name":"Bob Jones"}'
    runner.rebuild(gate.log, again)
    assert again.snapshot() == caught_up


def test_a_write_never_waits_for_the_follower(gate: Gate, tmp_path: Path) -> None:
    """The follower's store is not the log's write lock: a write goes through while the
    follower holds its own write transaction open (the gate's busy timeout is 2 s here)."""
    write(gate, "Alice Smith")
    follower = vectors(gate, tmp_path)
    runner.replay(gate.log, follower)
    held = VectorProjector(gate.log, HashingEmbedder(), path=tmp_path / "vectors.db")
    done = threading.Event()
    seconds: list[float] = []

    def writer() -> None:  # another thread, as another agent's write
        started = time.perf_counter()
        write(gate, "Bob Jones")
        seconds.append(time.perf_counter() - started)
        gate.log.disconnect()
        done.set()

    conn = held.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        held.index.reset(conn, "hashing-64", 64)  # rows written, the transaction open
        thread = threading.Thread(target=writer)
        thread.start()
        assert done.wait(timeout=10)
        thread.join()
    finally:
        conn.execute("ROLLBACK")
    assert seconds[0] < 1.0
    assert follower.checkpoint() < gate.log.head()[0]  # it has yet to see the write
