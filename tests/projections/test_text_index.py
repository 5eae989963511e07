"""The text index contract (``writegate.projections.search.testing``) on both backends and
both recorded histories; on SQLite, the FTS5 index agrees with its documents; on both, an
index of unstemmed words (the layout before) is made again when installed."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.postgres import Server
from writegate.eventlog import EventLog, Log
from writegate.eventlog.postgres import PostgresEventLog
from writegate.eventlog.sql import run_script
from writegate.projections.search import Document, PostgresTextIndex
from writegate.projections.search.bm25 import KINDS
from writegate.projections.search.sqlite import TOKENIZER, SqliteTextIndex
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
    note = Document("Note{}", "observation", "Note\nshe rides a pony")  # both: "poni"
    index.put(conn, [note])
    return "Note{}" in [h.identity for h in index.search(conn, "ponies", "observation", 10)]


ONE_TABLE = """
CREATE VIRTUAL TABLE search_fts USING fts5 (
    text, content = 'search_documents', content_rowid = 'rowid', tokenize = '{tokenizer}'
);
CREATE TRIGGER search_documents_ai AFTER INSERT ON search_documents BEGIN
    INSERT INTO search_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER search_documents_ad AFTER DELETE ON search_documents BEGIN
    INSERT INTO search_fts (search_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER search_documents_au AFTER UPDATE ON search_documents BEGIN
    INSERT INTO search_fts (search_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO search_fts (rowid, text) VALUES (new.rowid, new.text);
END;
"""


def one_table(conn: Any, tokenizer: str) -> None:
    """The index as the layouts before made it: one FTS5 table of every kind."""
    for kind in KINDS:
        conn.execute(f"DROP TABLE search_fts_{kind}")  # its triggers stay, writing nowhere:
        for change in ("ai", "ad", "au", "rows_ai", "rows_ad", "rows_au"):  # so they go too
            conn.execute(f"DROP TRIGGER IF EXISTS search_{kind}_{change}")
        conn.execute(f"DROP VIEW IF EXISTS search_documents_{kind}")
    run_script(conn, ONE_TABLE.replace("{tokenizer}", tokenizer))


@pytest.mark.parametrize("tokenizer", ["unicode61 remove_diacritics 2", TOKENIZER])
def test_an_sqlite_index_of_one_table_is_made_again_per_kind_on_install(
    tmp_path: Path, tokenizer: str
) -> None:
    """Before stems, and before a table per kind: a read-only copy searches the one table;
    a writer's install makes the tables again from the documents, stemmed."""
    log = EventLog(tmp_path / "log.db", inline=[StateProjection()])
    conn = log.connection()
    one_table(conn, tokenizer)
    assert _stemmed_search_finds(log) == (tokenizer == TOKENIZER)
    StateProjection().install(conn)  # a writer's open
    assert SqliteTextIndex().intact(conn)
    assert _stemmed_search_finds(log)
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "search_fts" not in names
    assert {f"search_fts_{kind}" for kind in KINDS} <= names
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
