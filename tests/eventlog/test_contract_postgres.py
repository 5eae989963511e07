"""The PostgreSQL log passes the log contract (``writegate.eventlog.testing``) on a real
server started by the harness, and keeps its own promises: TRUNCATE refused, a log found
again by a second process, a database that is not a log refused."""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
from pathlib import Path

import psycopg
import pytest

from tests.conftest import EXAMPLE_SCHEMA, SEED_SCHEMA, person
from tests.postgres import Server
from tests.server.harness import WRITEGATE
from writegate.eventlog import Actor
from writegate.eventlog.contract import Log
from writegate.eventlog.errors import EventLogError, NotAnEventLog
from writegate.eventlog.postgres import PostgresEventLog, describe_dsn
from writegate.eventlog.testing import LogContractTestCase, emitting, note
from writegate.gate import Gate, Rejected, WriteNodeResult

_NAMES = itertools.count(1)


@pytest.fixture(scope="class")
def _server(request: pytest.FixtureRequest, postgres: Server) -> None:
    request.cls.server = postgres


@pytest.mark.usefixtures("_server")
class TestPostgresLog(LogContractTestCase):
    __test__ = True
    server: Server

    def create_log_at(self, name: str) -> Log:
        return PostgresEventLog(self.server.create_database(f"contract_{next(_NAMES)}_{name}"))

    def _dsn(self, log: Log) -> str:
        assert isinstance(log, PostgresEventLog)
        return log.dsn

    def rewrite(self, log: Log, sql: str) -> None:
        with psycopg.connect(self._dsn(log), autocommit=True) as conn:
            conn.execute(sql.encode())

    def tamper(self, log: Log, seq: int) -> None:
        with psycopg.connect(self._dsn(log)) as conn:  # one transaction: triggers off, edit, on
            conn.execute("ALTER TABLE events DISABLE TRIGGER USER")
            conn.execute('UPDATE events SET payload = \'{"text":"forged"}\' WHERE seq = %s', (seq,))
            conn.execute("ALTER TABLE events ENABLE TRIGGER USER")


def test_truncate_is_refused(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn) as log:
        log.append(Actor(agent="ada"), emitting(note("a")))
        for table in ("events", "event_streams", "idempotency"):
            with psycopg.connect(pg_dsn, autocommit=True) as conn, pytest.raises(psycopg.Error):
                conn.execute(f"TRUNCATE {table}".encode())
        assert log.head()[0] == 1
        assert log.verify().ok


def test_a_second_opener_finds_the_same_log(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn) as first:
        first.append(Actor(agent="ada"), emitting(note("a")))
        with PostgresEventLog(pg_dsn, create=False) as second:
            assert second.head() == first.head()
        with PostgresEventLog(pg_dsn, readonly=True) as reader:
            assert reader.head() == first.head()
            with pytest.raises(EventLogError, match="read-only"):
                reader.append(Actor(agent="ada"), lambda tx: None)


def test_a_database_that_is_not_a_log_is_refused(pg_dsn: str) -> None:
    with pytest.raises(NotAnEventLog, match="run `writegate init`"):
        PostgresEventLog(pg_dsn, create=False)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE events (id int)")
    with pytest.raises(NotAnEventLog, match="not a writegate log"):
        PostgresEventLog(pg_dsn)


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    dsn = "postgresql://writer:s3cret@127.0.0.1:9/nowhere"
    with pytest.raises(EventLogError) as raised:
        PostgresEventLog(dsn, connect_timeout=1)
    assert "s3cret" not in str(raised.value)
    assert str(raised.value).startswith("postgresql://writer@127.0.0.1:9/nowhere: ")
    assert describe_dsn(dsn) == "postgresql://writer@127.0.0.1:9/nowhere"


def test_a_follower_waiting_wakes_at_the_commit_not_at_its_timeout(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn) as log:
        log.wait_for_append(0.01)  # listening from here on
        waiter = threading.Thread(target=log.wait_for_append, args=(600,))
        waiter.start()
        log.append(Actor(agent="ada"), emitting(note("a")))
        waiter.join(timeout=60)
        assert not waiter.is_alive()
        stop = threading.Event()
        stop.set()
        log.wait_for_append(600, stop)  # a stop ends the wait too


def test_a_lost_connection_is_one_clear_refusal_and_the_next_call_reconnects(
    postgres: Server, pg_dsn: str
) -> None:
    """A database restart (here: every backend of the log terminated) fails the write in
    flight with LOG_UNAVAILABLE and appends nothing; the next write opens a new connection."""
    with Gate.open(pg_dsn, default_actor=Actor(agent="ada")) as gate:
        gate.publish_schema(SEED_SCHEMA)
        assert isinstance(gate.write_node(**person("Alice")), WriteNodeResult)
        head = gate.log.head()
        database = pg_dsn.rsplit("/", 1)[1]
        with psycopg.connect(postgres.dsn(), autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (database,),
            )
        lost = gate.write_node(**person("Bob"), idempotency_key="bob-1")
        assert isinstance(lost, Rejected)
        assert lost.error_code == "LOG_UNAVAILABLE"
        assert lost.message.startswith(describe_dsn(pg_dsn) + ": the connection was lost")
        assert gate.log.head() == head  # nothing appended
        again = gate.write_node(**person("Bob"), idempotency_key="bob-1")
        assert isinstance(again, WriteNodeResult)
        assert gate.verify().ok


def test_writegate_db_names_a_postgres_log_for_the_cli(pg_dsn: str, tmp_path: Path) -> None:
    """``WRITEGATE_DB`` as ``--db``: the commands go to PostgreSQL, no file appears."""
    env = {**os.environ, "WRITEGATE_DB": pg_dsn}
    said = []
    for words in (
        ("init", "--schema", str(EXAMPLE_SCHEMA)),
        ("write", "node", "Person", "-k", "name=Ada", "--source", "hr.csv", "--method", "api"),
    ):
        done = subprocess.run(
            [WRITEGATE, "--as", "op", *words],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        said.append(done.stdout)
    assert said[0].startswith(f"log ready at {describe_dsn(pg_dsn)} (head seq 0)")
    assert list(tmp_path.iterdir()) == []
    with PostgresEventLog(pg_dsn, readonly=True) as log:
        assert log.head()[0] == 2
        assert log.read_range(2, 2)[0].actor.agent == "operator:op"
