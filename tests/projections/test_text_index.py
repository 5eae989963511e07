"""The text index contract (``writegate.projections.search.testing``) on both backends and
both recorded histories; on SQLite, the FTS5 index agrees with its documents."""

from __future__ import annotations

import itertools

import pytest

from tests.postgres import Server
from writegate.eventlog import EventLog, Log
from writegate.eventlog.postgres import PostgresEventLog
from writegate.projections.search.sqlite import SqliteTextIndex
from writegate.projections.search.testing import TextIndexContractTestCase
from writegate.projections.state import StateProjection
from writegate.projections.testing import TRUTH_HISTORY

_NAMES = itertools.count(1)


class TestSqliteTextIndex(TextIndexContractTestCase):
    __test__ = True

    def create_log(self) -> Log:
        return EventLog(self.scratch / "log.db", inline=[StateProjection()])

    def test_the_fts_index_agrees_with_its_documents(self) -> None:
        assert SqliteTextIndex().intact(self.conn)


class TestSqliteTextIndexTruth(TestSqliteTextIndex):
    history_file = TRUTH_HISTORY


@pytest.fixture(scope="class")
def _server(request: pytest.FixtureRequest, postgres: Server) -> None:
    request.cls.server = postgres


@pytest.mark.usefixtures("_server")
class TestPostgresTextIndex(TextIndexContractTestCase):
    __test__ = True
    server: Server

    def create_log(self) -> Log:
        dsn = self.server.create_database(f"text_index_{next(_NAMES)}")
        return PostgresEventLog(dsn, inline=[StateProjection()])


class TestPostgresTextIndexTruth(TestPostgresTextIndex):
    history_file = TRUTH_HISTORY
