"""`copy_log` moves a history between databases with its chain: SQLite -> PostgreSQL ->
SQLite gives the same head hash three times, each copy verifies, and the state read model
built on each is the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from writegate.eventlog import Actor, EventLog
from writegate.eventlog.copying import copy_log
from writegate.eventlog.errors import EventLogError
from writegate.eventlog.postgres import PostgresEventLog
from writegate.eventlog.testing import emitting, note
from writegate.projections.state import StateProjection


def _history(log: EventLog) -> None:
    for i in range(25):
        log.append(Actor(agent=f"agent-{i % 3}"), emitting(note(f"n{i}", f"s{i % 4}")))


def test_sqlite_to_postgres_to_sqlite_keeps_the_head(tmp_path: Path, pg_dsn: str) -> None:
    with EventLog(tmp_path / "first.db") as first:
        _history(first)
        with (
            PostgresEventLog(pg_dsn, inline=[StateProjection()]) as middle,
            EventLog(tmp_path / "last.db") as last,
        ):
            copied = copy_log(first, middle, batch=7)
            again = copy_log(middle, last, batch=10)
            heads = {first.head(), middle.head(), last.head(), copied, again}
            assert len(heads) == 1
            assert all(log.verify().ok for log in (first, middle, last))
            assert middle.stream_version("s1") == first.stream_version("s1") == 6
            # a copy resumes: nothing new to copy is nothing appended
            assert copy_log(first, middle) == first.head()


def test_a_copy_into_another_history_is_refused(tmp_path: Path) -> None:
    with EventLog(tmp_path / "a.db") as a, EventLog(tmp_path / "b.db") as b:
        _history(a)
        b.append(Actor(agent="someone"), emitting(note("else")))
        with pytest.raises(EventLogError, match="not the start of"):
            copy_log(a, b)
        assert b.head()[0] == 1
