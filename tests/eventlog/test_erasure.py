"""The SQLite log keeps the erasure contract (``writegate.eventlog.testing_erasure``)."""

from __future__ import annotations

from pathlib import Path

from tests.eventlog.test_contract import SQLiteLogs, _path
from writegate.eventlog.contract import Log
from writegate.eventlog.testing_erasure import ErasureContractTestCase


class TestSQLiteErasure(SQLiteLogs, ErasureContractTestCase):
    __test__ = True

    def raw_bytes(self, log: Log) -> bytes:
        path = _path(log)
        wal = Path(f"{path}-wal")
        return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
