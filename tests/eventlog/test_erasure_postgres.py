"""The PostgreSQL log keeps the erasure contract (``writegate.eventlog.testing_erasure``) on a
real server: after a forgetting, no byte of the values is left in the database's files."""

from __future__ import annotations

import itertools
from pathlib import Path

import psycopg
import pytest

from tests.postgres import Server, create_app_role
from writegate.eventlog import DraftEvent, Transaction
from writegate.eventlog.contract import Log
from writegate.eventlog.postgres import PostgresEventLog
from writegate.eventlog.testing_erasure import ADA, ADMIN, PERSON, ErasureContractTestCase

_NAMES = itertools.count(1)


@pytest.fixture(scope="class")
def _server(request: pytest.FixtureRequest, postgres: Server) -> None:
    request.cls.server = postgres


def _dsn(log: Log) -> str:
    assert isinstance(log, PostgresEventLog)
    return log.dsn


@pytest.mark.usefixtures("_server")
class TestPostgresErasure(ErasureContractTestCase):
    __test__ = True
    server: Server

    def create_log_at(self, name: str) -> Log:
        return PostgresEventLog(self.server.create_database(f"erasure_{next(_NAMES)}_{name}"))

    def rewrite(self, log: Log, sql: str) -> None:
        with psycopg.connect(_dsn(log), autocommit=True) as conn:
            conn.execute(sql.encode())

    def tamper(self, log: Log, seq: int) -> None:
        with psycopg.connect(_dsn(log)) as conn:
            conn.execute("ALTER TABLE events DISABLE TRIGGER USER")
            conn.execute('UPDATE events SET payload = \'{"note":"forged"}\' WHERE seq = %s', (seq,))
            conn.execute("ALTER TABLE events ENABLE TRIGGER USER")

    def raw_bytes(self, log: Log) -> bytes:
        """Every file of the log's database, once the server wrote its buffers to them."""
        with psycopg.connect(_dsn(log), autocommit=True) as conn:
            conn.execute("CHECKPOINT")
            row = conn.execute(
                "SELECT oid FROM pg_database WHERE datname = current_database()"
            ).fetchone()
        assert row is not None
        folder = Path(self.server.data) / "base" / str(row[0])
        return b"".join(f.read_bytes() for f in sorted(folder.iterdir()) if f.is_file())


def test_the_readme_role_seals_and_forgets_on_a_log_its_owner_made(pg_dsn: str) -> None:
    """The sealed values' tables are made with the log: the servers' role, which may not
    create tables, seals and forgets in them."""
    PostgresEventLog(pg_dsn).close()
    with PostgresEventLog(create_app_role(pg_dsn)) as log:

        def decide(tx: Transaction) -> None:
            tx.emit(DraftEvent("test.person", {"name": tx.seal(PERSON % "Ada", "Ada")}))

        log.append(ADA, decide)
        _, receipt = log.forget(ADMIN, [PERSON % "Ada"], reason="asked")
        assert receipt is not None
        assert log.read_range(1, 1)[0].payload == {"name": None}
        assert log.verify().erased == 1
