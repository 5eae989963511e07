"""The text index on SQLite: FTS5 with BM25, kept by triggers in the writing transaction.

``search_documents`` holds each entity's text; ``search_fts`` is an external-content FTS5
index over it, which the triggers keep (the layout ``sqlite-utils``' ``enable_fts`` makes).
sqlite-utils itself is not used: ``enable_fts`` runs ``executescript``, which commits the
caller's open transaction, and the index must be created inside the log's install
transaction and written inside each append's; its ``quote_fts`` ANDs the words and leaves a
query of bare quotes empty, which FTS5 refuses. The statements are few and all here.

Words are stemmed (FTS5's ``porter`` over ``unicode61``): on a public long-conversation
benchmark (``bench/bench_recall.py``) stems with the query's stop words left out found a
question's evidence in the top 10 about ten points more often than the words as written.
An index made with another tokenizer is made again on install, from the documents it has.
"""

from __future__ import annotations

import sqlite3

from writegate.eventlog.sql import Sql, run_script
from writegate.language.scopes import Visible
from writegate.projections.search.contract import DocumentRows, Hit, parse_cursor, search_words

TOKENIZER = "porter unicode61 remove_diacritics 2"
TABLES = """
CREATE TABLE IF NOT EXISTS search_documents (
    rowid INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    scope_from TEXT NOT NULL DEFAULT 'default',
    scope_to TEXT NOT NULL DEFAULT 'default'
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5 (
    text, content = 'search_documents', content_rowid = 'rowid',
    tokenize = '{tokenizer}'
);
CREATE TRIGGER IF NOT EXISTS search_documents_ai AFTER INSERT ON search_documents BEGIN
    INSERT INTO search_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS search_documents_ad AFTER DELETE ON search_documents BEGIN
    INSERT INTO search_fts (search_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS search_documents_au AFTER UPDATE ON search_documents BEGIN
    INSERT INTO search_fts (search_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO search_fts (rowid, text) VALUES (new.rowid, new.text);
END;
""".replace("{tokenizer}", TOKENIZER)

_HITS = (
    "SELECT d.identity AS identity, bm25(search_fts) AS score FROM search_fts "
    "JOIN search_documents d ON d.rowid = search_fts.rowid "
    "WHERE search_fts MATCH ? AND d.kind = ?{scoped}"
)
_FIRST = f"SELECT identity, score FROM ({_HITS}) ORDER BY score, identity LIMIT ?"
_NEXT = (
    f"SELECT identity, score FROM ({_HITS}) "
    "WHERE score > ? OR (score = ? AND identity > ?) "
    "ORDER BY score, identity LIMIT ?"
)


def fts_query(query: str) -> str:
    """FTS5's query for an agent's words: each quoted (a quote inside doubled), matching
    the words its stem begins, any of them."""
    return " OR ".join('"' + w.replace('"', '""') + '"*' for w in search_words(query))


class SqliteTextIndex(DocumentRows):
    """The text index in a SQLite log's file."""

    tables: tuple[str, ...] = ("search_documents", "search_fts")

    def install(self, conn: Sql) -> None:
        made = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'search_fts'").fetchone()
        outdated = made is not None and f"'{TOKENIZER}'" not in made[0]
        if outdated:  # another tokenizer's index: made again, from the documents it indexed
            conn.execute("DROP TABLE search_fts")
        run_script(conn, TABLES)
        self.add_scopes(conn)
        if outdated:
            conn.execute("INSERT INTO search_fts (search_fts) VALUES ('rebuild')")

    def search(
        self,
        conn: Sql,
        query: str,
        kind: str,
        limit: int,
        after: str | None = None,
        visible: Visible = None,
    ) -> list[Hit]:
        start = None if after is None else parse_cursor(after)  # refused whatever the query
        match = fts_query(query)
        if not match:
            return []
        scoped, scopes = self.scoped(visible)
        tail: list[object] = [limit]
        sql = _FIRST
        if start is not None:
            sql, tail = _NEXT, [start[0], start[0], start[1], limit]
        rows = conn.execute(sql.replace("{scoped}", scoped), [match, kind, *scopes, *tail])
        return [Hit(row[0], float(row[1])) for row in rows]

    def intact(self, conn: Sql) -> bool:
        """Whether the FTS5 index agrees with the documents it indexes."""
        try:
            conn.execute("INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError:  # "database disk image is malformed"
            return False
        return True
