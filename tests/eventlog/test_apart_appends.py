"""A long append (``apart``: a retraction's batch) commits in a group of its own, after the
appends queued before it: a write that arrived while one batch ran waits for that batch,
not also for the next one its author queued the moment the first committed. On both
backends, whose appends share the commit groups."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from writegate.eventlog import Actor, EventLog
from writegate.eventlog.appending import Appending
from writegate.eventlog.contract import LogTransaction
from writegate.eventlog.postgres import PostgresEventLog
from writegate.eventlog.testing import emitting, note

ADA, BOB = Actor(agent="ada"), Actor(agent="bob")


@pytest.fixture
def log(any_db: str | Path) -> Iterator[Appending]:
    opened = EventLog(any_db) if isinstance(any_db, Path) else PostgresEventLog(any_db)
    with opened:
        yield opened


def _queued_in_order(log: Appending, appends: list[Callable[[], object]]) -> int:
    """Queue ``appends`` one after another behind a held append, then let them go; how many
    groups committed (the held one's included)."""
    held, release = threading.Event(), threading.Event()

    def holding(tx: LogTransaction) -> None:
        tx.emit(note("held"))
        held.set()
        release.wait(10)

    groups = log.commit_groups
    before = groups.groups
    threads = [threading.Thread(target=log.append, args=(ADA, holding))]
    threads[0].start()
    assert held.wait(10)
    for n, append in enumerate(appends, 1):
        threads.append(threading.Thread(target=append))
        threads[-1].start()
        for _ in range(500):  # until it waits in the queue, behind the ones before it
            if groups.waiting == n:
                break
            threading.Event().wait(0.01)
        assert groups.waiting == n
    release.set()
    for thread in threads:
        thread.join()
    return groups.groups - before


def test_a_write_queued_before_a_long_append_commits_without_it(log: Appending) -> None:
    def write() -> object:
        return log.append(BOB, emitting(note("a write", "w")))

    def batch() -> object:
        return log.append(ADA, emitting(note("a batch", "r"), note("more", "r")), apart=True)

    assert _queued_in_order(log, [write, batch]) == 3  # held; the write; the batch alone
    texts = [e.payload["text"] for e in log.iter_events()]
    assert texts == ["held", "a write", "a batch", "more"]
    assert log.verify().ok


def test_writes_queued_after_a_long_append_commit_together_after_it(log: Appending) -> None:
    def write(n: int) -> Callable[[], object]:
        return lambda: log.append(BOB, emitting(note(f"write {n}", f"w{n}")))

    def batch() -> object:
        return log.append(ADA, emitting(note("a batch", "r")), apart=True)

    assert _queued_in_order(log, [write(1), batch, write(2), write(3)]) == 4
    texts = [e.payload["text"] for e in log.iter_events()]
    assert texts == ["held", "write 1", "a batch", "write 2", "write 3"]


def test_ordinary_appends_still_commit_as_one_group(log: Appending) -> None:
    def write(n: int) -> Callable[[], object]:
        return lambda: log.append(BOB, emitting(note(f"write {n}", f"w{n}")))

    assert _queued_in_order(log, [write(1), write(2), write(3)]) == 2
