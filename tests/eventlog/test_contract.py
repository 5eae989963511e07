"""The SQLite log passes the log contract (``writegate.eventlog.testing``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from writegate.eventlog import EventLog
from writegate.eventlog.contract import Log
from writegate.eventlog.tables import APPEND_ONLY_TRIGGERS, create_tables
from writegate.eventlog.testing import LogContractTestCase


def _path(log: Log) -> Path:
    assert isinstance(log, EventLog)
    return log.path


class SQLiteLogs:
    """How the contract test cases make, rewrite and tamper with a SQLite log (the log
    contract's and the erasure contract's)."""

    scratch: Path

    def create_log_at(self, name: str) -> Log:
        return EventLog(self.scratch / f"{name}.db")

    def rewrite(self, log: Log, sql: str) -> None:
        conn = sqlite3.connect(_path(log), isolation_level=None)
        try:
            conn.execute(sql)
        finally:
            conn.close()

    def tamper(self, log: Log, seq: int) -> None:
        conn = sqlite3.connect(_path(log), isolation_level=None)
        try:
            conn.execute("BEGIN")
            for trigger in APPEND_ONLY_TRIGGERS:
                conn.execute(f"DROP TRIGGER {trigger}")
            conn.execute('UPDATE events SET payload = \'{"text":"forged"}\' WHERE seq = ?', (seq,))
            create_tables(conn)  # the triggers back, so only verify can tell
            conn.execute("COMMIT")
        finally:
            conn.close()


class TestSQLiteLog(SQLiteLogs, LogContractTestCase):
    __test__ = True


def test_the_sqlite_log_is_a_log(tmp_path: Path) -> None:
    with EventLog(tmp_path / "log.db") as log:
        assert isinstance(log, Log)
