"""The SQLite log keeps the erasure contract (``writegate.eventlog.testing_erasure``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from writegate.eventlog import EventLog
from writegate.eventlog.contract import Log
from writegate.eventlog.tables import APPEND_ONLY_TRIGGERS, create_tables
from writegate.eventlog.testing_erasure import ErasureContractTestCase


def _path(log: Log) -> Path:
    assert isinstance(log, EventLog)
    return log.path


class TestSQLiteErasure(ErasureContractTestCase):
    __test__ = True

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
            conn.execute('UPDATE events SET payload = \'{"note":"forged"}\' WHERE seq = ?', (seq,))
            create_tables(conn)
            conn.execute("COMMIT")
        finally:
            conn.close()

    def raw_bytes(self, log: Log) -> bytes:
        path = _path(log)
        wal = Path(f"{path}-wal")
        return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
