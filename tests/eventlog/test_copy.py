"""`copy_log` moves a history between databases with its chain: SQLite -> PostgreSQL ->
SQLite gives the same head hash three times, each copy verifies, and the state read model
built on each is the same. `writegate copy` does it from the command line, on a history
the CLI wrote (a schema, nodes, relationships, a deletion)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_SCHEMA, FIXTURES
from tests.console import run as writegate_run
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


def cli(*words: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = writegate_run(["--as", "op", *words], cwd=cwd)
    assert done.returncode == 0, (words, done.stdout, done.stderr)
    return done


def test_the_copy_command_keeps_the_head_there_and_back(tmp_path: Path, pg_dsn: str) -> None:
    claim = ("--source", "hr.csv", "--method", "parsed", "--reliability", "0.9")
    first = ("--db", "first.db")
    cli(*first, "init", "--schema", str(EXAMPLE_SCHEMA), cwd=tmp_path)
    cli(*first, "write", "batch", str(FIXTURES / "demo_writes.jsonl"), cwd=tmp_path)
    cli(*first, "write", "node", "user_profile", "-k", 'name="Grace Hopper"',
        "-p", "role=director", *claim, cwd=tmp_path)  # fmt: skip
    cli(*first, "write", "relationship", "WORKS_AT", "--from", "Person",
        "-f", 'name="Grace Hopper"', "--to", "Company", "-t", "name=Initech",
        "--merge-endpoints", *claim, cwd=tmp_path)  # fmt: skip
    cli(*first, "delete", "node", "Person", "-k", "name=Alan", "--detach", *claim, cwd=tmp_path)
    anchors = [cli(*first, "verify", "--anchor", cwd=tmp_path).stdout.split()[-1]]
    there = cli("copy", "first.db", pg_dsn, cwd=tmp_path).stdout.split()[-1]
    back = cli("copy", pg_dsn, "last.db", cwd=tmp_path).stdout.split()[-1]
    for db in (pg_dsn, "last.db"):
        anchors.append(cli("--db", db, "verify", "--anchor", cwd=tmp_path).stdout.split()[-1])
    assert anchors[0].startswith("13:")  # the schema, 8 writes of the batch, 3, the deletion
    assert anchors == [anchors[0]] * 3
    assert there == back == anchors[0]
