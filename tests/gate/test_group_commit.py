"""Many threads writing through one gate: their writes commit in groups, each kept or refused
on its own, nothing lost or doubled, ``if_version`` and idempotency exact (both backends)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import person
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


def _together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run ``calls`` on threads released at once; each one's result."""
    start = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        start.wait()
        results[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_twenty_writers_lose_and_double_nothing(gate: Gate) -> None:
    def writer(n: int) -> Callable[[], list[Any]]:
        actor = Actor(agent=f"agent-{n}")
        return lambda: [gate.write_node(**person(f"p{n}-{i}"), actor=actor) for i in range(15)]

    groups_before = gate.log.commit_groups.groups
    results = _together([writer(n) for n in range(20)])
    written = [r for rs in results for r in rs]
    assert all(isinstance(r, WriteNodeResult) and r.created for r in written)
    seqs = sorted(r.seq for r in written)
    assert seqs == list(range(seqs[0], seqs[0] + 300))  # one event each, no gap, no double
    assert gate.log.head()[0] == seqs[-1]
    assert gate.state.counts(gate.log.connection()).labels == {"Person": 300}
    groups = gate.log.commit_groups.groups - groups_before
    assert groups < 300  # some writes shared a commit
    assert gate.verify().ok


def test_one_if_version_wins_among_concurrent_writers(gate: Gate) -> None:
    assert isinstance(gate.write_node(**person("Alice")), WriteNodeResult)

    def update(n: int) -> Callable[[], Any]:
        return lambda: gate.write_node(
            **person("Alice", properties={"age": n}, if_version=1), actor=Actor(agent=f"a{n}")
        )

    results = _together([update(n) for n in range(12)])
    won = [r for r in results if isinstance(r, WriteNodeResult)]
    lost = [r for r in results if isinstance(r, Rejected)]
    assert len(won) == 1
    assert won[0].version == 2
    assert len(lost) == 11
    assert {r.error_code for r in lost} == {"VERSION_CONFLICT"}
    assert gate.log.stream_version('node:Person{"name":"Alice"}') == 2


def test_concurrent_retries_under_one_key_append_once(gate: Gate) -> None:
    def retry() -> Any:
        return gate.write_node(**person("Bob"), idempotency_key="once")

    results = _together([retry for _ in range(12)])
    assert {r.seq for r in results} == {results[0].seq}
    assert sum(1 for e in gate.log.iter_events() if e.type == "node.written") == 1
