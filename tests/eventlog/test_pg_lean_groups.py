"""A commit group on PostgreSQL goes without a savepoint a member: a member's writes wait to
be sent until the next read, so one refused before any was sent is undone by dropping them.
A member that sent a write before it was refused, or one whose write the database refused,
makes the whole group go again the careful way — each member in its own savepoint — so it
is still refused alone and the others are committed, in order, with no gap. Counted on the
wire (``tests.roundtrips``): the statements each way."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import psycopg
import pytest

from tests.postgres import Server
from tests.roundtrips import RoundTrips
from writegate.eventlog import Actor
from writegate.eventlog.contract import LogTransaction
from writegate.eventlog.postgres import PostgresEventLog
from writegate.eventlog.sql import sent
from writegate.eventlog.testing import emitting, note
from writegate.eventlog.transaction import Transaction

ADA, BOB = Actor(agent="ada"), Actor(agent="bob")
Outcome = list[int] | BaseException


@pytest.fixture
def relay(postgres: Server) -> Iterator[RoundTrips]:
    with RoundTrips(postgres.port) as relay:
        yield relay


@pytest.fixture
def log(relay: RoundTrips, pg_dsn: str) -> Iterator[PostgresEventLog]:
    with PostgresEventLog(relay.dsn(pg_dsn)) as log:
        log.append(ADA, emitting(note("base", "fixed")))
        yield log


def queued(log: PostgresEventLog, decides: list[Callable[[LogTransaction], None]]) -> list[Outcome]:
    """Each of ``decides`` appended on its own thread, all queued behind a held append so
    that they commit as one group; each one's seqs or what it raised."""
    held, release = threading.Event(), threading.Event()

    def holding(tx: LogTransaction) -> None:
        tx.emit(note("held"))
        held.set()
        release.wait(10)

    first = threading.Thread(target=log.append, args=(ADA, holding))
    first.start()
    assert held.wait(10)
    results: list[Outcome] = [[] for _ in decides]

    def run(index: int) -> None:
        try:
            results[index] = [e.seq for e in log.append(BOB, decides[index]).events]
        except BaseException as exc:
            results[index] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(decides))]
    for thread in threads:
        thread.start()
    for _ in range(500):
        if log.commit_groups.waiting == len(decides):
            break
        threading.Event().wait(0.01)
    groups = log.commit_groups.groups
    release.set()
    for thread in [first, *threads]:
        thread.join()
    assert log.commit_groups.groups - groups == 2  # the held append's, then theirs
    return results


def refused(tx: LogTransaction) -> None:
    tx.emit(note("half", "other"))  # held: never sent
    raise ValueError("refused")


def refused_by_the_database(tx: LogTransaction) -> None:
    assert isinstance(tx, Transaction)
    tx.emit(note("half", "other"))
    sent(tx.conn, "INSERT INTO events (seq) VALUES (NULL)")  # fails on the server


def kept(log: PostgresEventLog) -> list[object]:
    return [e.payload["text"] for e in log.iter_events()]


def test_a_group_sends_no_savepoint_and_a_refused_member_is_undone_alone(
    relay: RoundTrips, log: PostgresEventLog
) -> None:
    relay.reset()
    decides = [emitting(note("one", "a")), refused, emitting(note("two", "b"))]
    results = queued(log, decides)
    assert isinstance(results[1], ValueError)
    assert [results[0], results[2]] == [[3], [4]]
    assert not [q for q in relay.ran if q.startswith(("SAVEPOINT", "ROLLBACK"))]
    assert kept(log) == ["base", "held", "one", "two"]
    assert log.stream_version("other") == 0
    assert log.verify().ok


def test_a_member_the_database_refuses_makes_the_group_go_again_with_savepoints(
    relay: RoundTrips, log: PostgresEventLog
) -> None:
    relay.reset()
    decides = [emitting(note("one", "a")), refused_by_the_database, emitting(note("two", "b"))]
    results = queued(log, decides)
    assert isinstance(results[1], psycopg.Error)  # the chain's trigger: no such event
    assert [results[0], results[2]] == [[3], [4]]
    assert len([q for q in relay.ran if q == "SAVEPOINT append"]) == 3  # the careful way
    assert kept(log) == ["base", "held", "one", "two"]
    assert log.stream_version("other") == 0
    assert log.verify().ok


def test_a_member_refused_after_it_sent_a_write_makes_the_group_go_again_with_savepoints(
    relay: RoundTrips, log: PostgresEventLog
) -> None:
    def sent_then_refused(tx: LogTransaction) -> None:
        assert isinstance(tx, Transaction)
        sent(
            tx.conn,
            "INSERT INTO event_streams (stream, version, seq) VALUES (?, ?, ?)",
            ("x", 9, 1),
        )
        raise ValueError("refused")

    relay.reset()
    results = queued(log, [emitting(note("one", "a")), sent_then_refused])
    assert (results[0], type(results[1])) == ([3], ValueError)
    assert "SAVEPOINT append" in relay.ran
    assert kept(log) == ["base", "held", "one"]
    assert log.stream_version("x") == 0
    assert log.verify().ok
