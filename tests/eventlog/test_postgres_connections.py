"""How the PostgreSQL log uses its connections, on the harness's real server: threads that
come and go leave none behind; a write lock not had in time is a coded, retryable refusal
that leaves no transaction open; appends do not depend on the database's default isolation;
a read model current at opening takes no lock; a standby that cannot be listened on says so."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from tests.conftest import SEED_SCHEMA, person
from tests.postgres import Server, create_app_role, standby_of
from writegate.eventlog import Actor, LogUnavailable
from writegate.eventlog.errors import LogBusy
from writegate.eventlog.postgres import PostgresEventLog
from writegate.eventlog.testing import emitting, note
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.projections.state import StateProjection

POOL_SIZE = 10  # a process's connections at most, as the README says
LOCK = "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.events'))"


def connections(dsn: str) -> int:
    """The log's connections to its database now (a connection of the test's aside)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'writegate'"
        ).fetchone()
        assert row is not None
        return int(row[0])


def test_bursts_of_short_lived_threads_leave_the_connections_bounded(pg_dsn: str) -> None:
    """As a server's worker threads: each burst runs on threads nobody runs again."""
    with PostgresEventLog(pg_dsn, inline=[StateProjection()]) as log:
        barrier = threading.Barrier(25)

        def work(i: int) -> None:
            barrier.wait()  # all at once: as many threads as can be, each wanting the log
            log.append(Actor(agent=f"a{i}"), emitting(note(f"n{i}")))
            with log.snapshot():
                log.head()
            log.read(limit=5)

        for _burst in range(4):
            threads = [threading.Thread(target=work, args=(i,)) for i in range(25)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert connections(pg_dsn) <= POOL_SIZE
        assert log.head()[0] == 100
        assert log.verify().ok


def test_a_lock_not_had_in_time_is_log_busy_and_leaves_no_transaction(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn, lock_timeout=0.3) as log:
        log.append(Actor(agent="ada"), emitting(note("first")))
        with psycopg.connect(pg_dsn, autocommit=True) as holder:
            holder.execute("BEGIN")
            holder.execute(LOCK)  # another server's append, holding the lock
            with pytest.raises(LogBusy, match=r"write lock was not free within 0\.3 s") as busy:
                log.append(Actor(agent="ada"), emitting(note("second")))
            assert not log.connection().in_transaction
            cause = busy.value.__cause__
            assert isinstance(cause, psycopg.errors.LockNotAvailable)
            assert cause.__cause__ is None  # the database's error, not its own cause
            holder.execute("ROLLBACK")
        assert log.head()[0] == 1  # nothing appended
        assert log.append(Actor(agent="ada"), emitting(note("third"))).events[0].seq == 2
        assert log.verify().ok


def test_a_read_model_ahead_of_the_head_it_was_read_after_opens_without_the_lock(
    pg_dsn: str,
) -> None:
    """Opening reads the head, then the read model's checkpoint: another server's commit
    in between leaves the checkpoint ahead of the head read. That read model is current:
    opening takes no write lock (it would wait for every append to catch up on nothing)."""
    with PostgresEventLog(pg_dsn, inline=[StateProjection()]) as log:
        log.append(Actor(agent="ada"), emitting(note("first")))
    with psycopg.connect(pg_dsn, autocommit=True) as holder:
        holder.execute(  # as the checkpoint read just after another server's commit
            "UPDATE projection_checkpoints SET seq = seq + 1 WHERE name = 'state'"
        )
        holder.execute("BEGIN")
        holder.execute(LOCK)  # that server's next append, holding the lock
        with PostgresEventLog(pg_dsn, inline=[StateProjection()], lock_timeout=0.3) as log:
            assert log.head()[0] == 1
        holder.execute("ROLLBACK")


def test_an_agent_waiting_out_the_lock_gets_log_unavailable_and_retries(pg_dsn: str) -> None:
    """Through the gate: the refusal is coded (LOG_UNAVAILABLE, retryable), not an internal
    error, and the same call with the same key lands once the lock is free."""
    with Gate.open(pg_dsn, default_actor=Actor(agent="ada")) as gate:
        gate.publish_schema(SEED_SCHEMA)
        assert isinstance(gate.log, PostgresEventLog)
        gate.log.lock_timeout = 0.3
        head = gate.log.head()
        with psycopg.connect(pg_dsn, autocommit=True) as holder:
            holder.execute("BEGIN")
            holder.execute(LOCK)
            busy = gate.write_node(**person("Alice"), idempotency_key="alice-1")
            holder.execute("ROLLBACK")
        assert isinstance(busy, Rejected)
        assert busy.error_code == "LOG_UNAVAILABLE"
        assert "write lock was not free" in busy.message
        assert gate.log.head() == head
        again = gate.write_node(**person("Alice"), idempotency_key="alice-1")
        assert isinstance(again, WriteNodeResult)
        assert isinstance(gate.write_node(**person("Bob")), WriteNodeResult)
        assert gate.verify().ok


@pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
def test_appends_hold_under_any_default_isolation(pg_dsn: str, isolation: str) -> None:
    """Two logs (two servers) appending at once, and a third verifying meanwhile, in a
    database whose default isolation is not READ COMMITTED."""
    database = pg_dsn.rsplit("/", 1)[1]
    with psycopg.connect(pg_dsn, autocommit=True) as owner:
        owner.execute(
            f"ALTER DATABASE \"{database}\" SET default_transaction_isolation = '{isolation}'"
        )
    with PostgresEventLog(pg_dsn, inline=[StateProjection()]) as first:
        first.append(Actor(agent="ada"), emitting(note("0")))
    logs = [PostgresEventLog(pg_dsn, inline=[StateProjection()]) for _ in range(2)]
    failures: list[BaseException] = []

    def appender(log: PostgresEventLog, name: str) -> None:
        for i in range(30):
            try:
                log.append(Actor(agent=name), emitting(note(f"{name}{i}", f"s{i % 3}")))
            except (psycopg.Error, LogUnavailable) as exc:
                failures.append(exc)

    threads = [threading.Thread(target=appender, args=(log, f"w{n}")) for n, log in enumerate(logs)]
    for thread in threads:
        thread.start()
    reports = [logs[0].verify() for _ in range(5)]  # each one snapshot, while writers go on
    for thread in threads:
        thread.join()
    try:
        assert failures == []
        assert logs[1].head()[0] == 61
        assert all(report.ok for report in reports)
        assert logs[1].verify().ok
        assert logs[0].stream_version("s0") == 20
    finally:
        for log in logs:
            log.close()


def test_a_request_waiting_for_a_busy_pool_opens_no_connection(pg_dsn: str) -> None:
    """Every connection of the pool busy, the database healthy: a request that waits out
    the timeout is told so, without opening a connection of its own to learn why (each
    waiting request would add a handshake). The role may hold one connection, so such a
    connection would be refused, and its refusal said instead."""
    PostgresEventLog(pg_dsn).close()  # the log created
    app = create_app_role(pg_dsn)
    with psycopg.connect(pg_dsn, autocommit=True) as owner:
        role = app.split("://", 1)[1].split("@", 1)[0]
        owner.execute(f'ALTER ROLE "{role}" CONNECTION LIMIT 1')
    with PostgresEventLog(app, pool_size=1, connect_timeout=1) as log:
        for _ in range(50):  # the pool's one connection made (the opening's own has gone)
            try:
                log.head()
                break
            except LogUnavailable:
                continue
        said: list[str] = []

        def waits() -> None:
            with pytest.raises(LogUnavailable) as refused:
                log.head()
            said.append(str(refused.value))

        with log.snapshot():  # the one connection held by this thread's read
            waiting = threading.Thread(target=waits)
            waiting.start()
            waiting.join()
        assert said == [
            f"{log.describe()}: no connection free within 1 s (all 1 of this process's are in use)"
        ]


def test_a_log_on_a_standby_cannot_be_waited_on_and_says_so(postgres: Server, pg_dsn: str) -> None:
    """A hot standby reads but refuses LISTEN: waiting for appends is one line naming the
    log (``LogUnavailable``, as a follower is told), and the connection tried is closed."""
    with PostgresEventLog(pg_dsn) as log:
        log.append(Actor(agent="ada"), emitting(note("first")))
    database = pg_dsn.rsplit("/", 1)[1]
    with (
        standby_of(postgres) as standby,
        # a pool of one: a pool that grew under load (its second connection idle, not
        # leaked) would otherwise be counted as one left open
        PostgresEventLog(standby.dsn(database), readonly=True, pool_size=1) as replica,
    ):
        wait_for_replay(replica, 1)
        before = connections(standby.dsn(database))
        with pytest.raises(LogUnavailable) as refused:
            replica.wait_for_append(0.1)
        message = str(refused.value)
        assert message.startswith(f"{replica.describe()}: ")
        assert "\n" not in message
        assert "LISTEN" in message
        # none left open: a closed connection's backend leaves the server a moment later
        deadline = time.monotonic() + 10
        while connections(standby.dsn(database)) != before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert connections(standby.dsn(database)) == before


def wait_for_replay(log: PostgresEventLog, head: int) -> None:
    for _ in range(200):
        if log.head()[0] >= head:
            return
        time.sleep(0.05)
    raise AssertionError(f"the standby did not replay up to {head}")
