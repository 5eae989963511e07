"""Retries with an idempotency key append nothing and return the first result."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import concurrently, person, relationship
from writegate.eventlog import Actor
from writegate.gate import BatchResult, Gate, Rejected, WriteNodeResult, dump


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db


def test_retry_returns_the_first_result_and_appends_nothing(gate: Gate) -> None:
    first = gate.write_node(**person(idempotency_key="k-1"))
    head = gate.log.head()
    again = gate.write_node(**person(idempotency_key="k-1"))
    assert isinstance(again, WriteNodeResult)
    assert dump(again) == dump(first)
    assert gate.log.head() == head


def test_key_survives_reopening_the_log(gate: Gate, db_path: Path) -> None:
    first = gate.write_node(**person(idempotency_key="k-persist"))
    gate.close()
    with Gate.open(db_path, default_actor=gate.default_actor) as reopened:
        again = reopened.write_node(**person(idempotency_key="k-persist"))
        assert dump(again) == dump(first)
        assert reopened.log.head()[0] == first.seq  # type: ignore[union-attr]


def test_same_key_different_request_is_rejected(gate: Gate) -> None:
    gate.write_node(**person(idempotency_key="k-2"))
    head = gate.log.head()
    result = gate.write_node(**person(properties={"age": 99}, idempotency_key="k-2"))
    assert isinstance(result, Rejected)
    assert result.error_code == "IDEMPOTENCY_KEY_REUSED"
    assert gate.log.head() == head


def test_keys_are_scoped_per_agent(gate: Gate) -> None:
    a = gate.write_node(actor=Actor(agent="a"), **person(idempotency_key="shared"))
    b = gate.write_node(actor=Actor(agent="b"), **person(idempotency_key="shared"))
    assert a.seq != b.seq  # type: ignore[union-attr]


def test_a_rejected_write_does_not_consume_the_key(gate: Gate) -> None:
    gate.write_node(**person("Alice"))
    rejected = gate.write_relationship(**relationship(idempotency_key="rel-1"))
    assert isinstance(rejected, Rejected)  # Bob missing
    gate.write_node(**person("Bob"))
    assert gate.write_relationship(**relationship(idempotency_key="rel-1")).status == "written"


def test_batch_retry_returns_every_item_result(gate: Gate) -> None:
    items = [{"op": "write_node", **person(n)} for n in ("A", "B", "C")]
    first = gate.write_batch(items=items, idempotency_key="batch-1")
    head = gate.log.head()
    again = gate.write_batch(items=items, idempotency_key="batch-1")
    assert isinstance(again, BatchResult)
    assert dump(again) == dump(first)
    assert len(again.results) == 3
    assert gate.log.head() == head


def test_concurrent_retries_append_once(gate: Gate) -> None:
    results: list[object] = []

    def retry() -> None:
        results.append(dump(gate.write_node(**person("Racer", idempotency_key="race"))))

    concurrently(retry, 8)
    assert all(r == results[0] for r in results), results
    written = gate.log.read(types=["node.written"], limit=100).events
    assert len(written) == 1
