"""The text index contract (``writegate.projections.search.testing``) on both backends and
both recorded histories; on SQLite, the FTS5 index agrees with its documents; on both, an
index of unstemmed words (the layout before) is made again when installed."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.postgres import Server
from writegate.eventlog import EventLog, Log
from writegate.eventlog.postgres import PostgresEventLog
from writegate.projections.search import Document, PostgresTextIndex
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


def _stemmed_search_finds(log: Log) -> bool:
    conn = log.connection()
    index = StateProjection().text_index(conn)
    index.put(conn, [Document("Note{}", "node", "Note\nshe rides a pony")])  # both: "poni"
    return "Note{}" in [h.identity for h in index.search(conn, "ponies", "node", 10)]


def test_an_sqlite_index_of_unstemmed_words_is_made_again_on_install(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "log.db", inline=[StateProjection()])
    conn = log.connection()
    conn.execute("DROP TABLE search_fts")  # the index as the layout before stems made it
    conn.execute(
        "CREATE VIRTUAL TABLE search_fts USING fts5 (text, content = 'search_documents', "
        "content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2')"
    )
    assert not _stemmed_search_finds(log)
    SqliteTextIndex().install(conn)
    assert SqliteTextIndex().intact(conn)
    assert _stemmed_search_finds(log)
    log.close()


def test_a_postgres_index_of_unstemmed_words_is_made_again_on_install(postgres: Server) -> None:
    log = PostgresEventLog(
        postgres.create_database("text_index_simple"), inline=[StateProjection()]
    )
    conn = log.connection()
    conn.execute("ALTER TABLE search_documents DROP COLUMN words")  # as before stems
    conn.execute(
        "ALTER TABLE search_documents ADD COLUMN words tsvector "
        "GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED"
    )
    assert not _stemmed_search_finds(log)
    PostgresTextIndex().install(conn)
    assert _stemmed_search_finds(log)
    log.close()
