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
A search reads a bounded number of documents however common its words (``scored``).
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

COMMON = 256  # a word in more documents (of the kind searched) than this is a common one
_FROM = (
    "FROM search_fts JOIN search_documents d ON d.rowid = search_fts.rowid "
    "WHERE search_fts MATCH ? AND d.kind = ?{scoped}"
)
_HOLDING = "SELECT count(*) FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT ?)"
_SCORED = f"SELECT d.identity, bm25(search_fts) {_FROM}"
_RECENT = f"{_SCORED} ORDER BY search_fts.rowid DESC LIMIT ?"


def phrase(word: str, begins: bool = False) -> str:
    """FTS5's phrase for one of an agent's words: quoted (a quote inside doubled), matching
    the word's stem, or (``begins``) the words it begins."""
    return '"' + word.replace('"', '""') + ('"*' if begins else '"')


def scored(
    conn: Sql, query: str, kind: str, visible: Visible, common: int = COMMON
) -> dict[str, float]:
    """Each document of ``kind`` that ``query``'s words find, with its BM25 score as FTS5
    gives it for all of them, reading a bounded number of documents whatever the log's size.

    A word matches its stem; one that is no indexed word matches the words it begins (a
    prefix merges every such word's list of documents first, so it is not asked of a word
    that is there). BM25 over an OR query scores every document holding any word, so one
    common word once cost a search a third of the log. Here a word is rare when at most
    ``common`` documents hold it: every document holding a rare word is scored,
    exactly (FTS5 sums BM25 over a query's phrases, so the score for all words is
    ``bm25((rare) AND (all))`` less ``bm25(rare)``: each rare phrase counted once). Of the
    documents holding only common words, the ``common`` most recent holding all of the
    words and the ``common`` most recent holding any are scored, exactly too (one there
    with a rare word takes its score from the rare pass). Never looked at: an older document
    holding common words only, and not all of them."""
    where, scopes = DocumentRows.scoped(visible)
    head = [kind, *scopes]

    def rows(sql: str, match: str, *tail: object) -> list[tuple[str, float]]:
        return conn.execute(sql.replace("{scoped}", where), [match, *head, *tail]).fetchall()

    def holding(match: str) -> int:  # of any kind: a bound, never a filter
        return int(conn.execute(_HOLDING, (match, common + 1)).fetchone()[0])

    rare: list[str] = []
    frequent: list[str] = []
    for word in search_words(query):
        match = phrase(word)
        held = holding(match)
        if held == 0:
            match = phrase(word, begins=True)
            held = holding(match)
        if held:
            (rare if held <= common else frequent).append(match)
    phrases = rare + frequent
    found: dict[str, float] = {}
    if frequent:
        recent = rows(_RECENT, " OR ".join(frequent), common)
        found.update(recent)
        if len(phrases) > 1 and len(recent) == common:  # fewer: every such one was read
            found.update(rows(_RECENT, " AND ".join(phrases), common))
    if rare and not frequent:
        found.update(rows(_SCORED, " OR ".join(rare)))
    elif rare:
        some = " OR ".join(rare)
        alone = dict(rows(_SCORED, some))
        for identity, score in rows(_SCORED, f"({some}) AND ({' OR '.join(phrases)})"):
            found[identity] = score - alone[identity]
    return found


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
        hits = sorted(
            (score, identity) for identity, score in scored(conn, query, kind, visible).items()
        )
        if start is not None:
            hits = [hit for hit in hits if hit > start]
        return [Hit(identity, score) for score, identity in hits[:limit]]

    def intact(self, conn: Sql) -> bool:
        """Whether the FTS5 index agrees with the documents it indexes."""
        try:
            conn.execute("INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError:  # "database disk image is malformed"
            return False
        return True
