"""An append's savepoint keeps the pages it copies aside in memory: SQLite otherwise opens a
new temporary file for them once an append changes more than 16 pages, which a write
with a resolution index (or a text index merge) often does."""

from __future__ import annotations

import os
from pathlib import Path

from writegate.eventlog import Actor, EventLog
from writegate.eventlog.events import DraftEvent
from writegate.eventlog.transaction import Transaction


def _temporary_files() -> list[str]:
    """SQLite's temporary files this process holds open (deleted on open, still listed)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if "etilqs_" in target:
            found.append(target)
    return found


def test_an_append_changing_many_pages_opens_no_temporary_file(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "log.db")
    held: list[list[str]] = []
    long = "s" * 200  # a stream index page holds few of these names

    def first(tx: Transaction) -> None:
        for i in range(0, 4000, 2):
            tx.emit(DraftEvent("test.one", {"i": i}, (f"{i:05d}{long}",)))

    def second(tx: Transaction) -> None:  # a name between every 50th: 40 pages already there
        for i in range(1, 4000, 100):
            tx.emit(DraftEvent("test.one", {"i": i}, (f"{i:05d}{long}",)))
        held.append(_temporary_files())

    log.append(Actor(agent="test"), first)
    log.append(Actor(agent="test"), second)  # alone, in its group's savepoint
    assert held == [[]]
    assert log.verify().ok
    log.close()
