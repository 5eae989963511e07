"""The text index on SQLite: FTS5 with BM25, kept by triggers in the writing transaction.

``search_documents`` holds each entity's text; ``search_fts_<kind>`` is an external-content
FTS5 index over the documents of one kind (a view of them), which the triggers keep (the
layout ``sqlite-utils``' ``enable_fts`` makes, once per kind: a search of one kind then never
reads past the documents of another). sqlite-utils itself is not used: ``enable_fts`` runs
``executescript``, which commits the caller's open transaction, and the index must be
created inside the log's install transaction and written inside each append's; its
``quote_fts`` ANDs the words and leaves a query of bare quotes empty, which FTS5 refuses.
The statements are few and all here.

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
KINDS = ("node", "relationship", "observation")  # one FTS5 table each: a later kind, one more
DOCUMENTS = """
CREATE TABLE IF NOT EXISTS search_documents (
    rowid INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    scope_from TEXT NOT NULL DEFAULT 'default',
    scope_to TEXT NOT NULL DEFAULT 'default'
);
"""
_PER_KIND = """
CREATE VIEW IF NOT EXISTS search_documents_{kind} AS
    SELECT rowid, text FROM search_documents WHERE kind = '{kind}';
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts_{kind} USING fts5 (
    text, content = 'search_documents_{kind}', content_rowid = 'rowid',
    tokenize = '{tokenizer}'
);
CREATE TRIGGER IF NOT EXISTS search_{kind}_ai AFTER INSERT ON search_documents
WHEN new.kind = '{kind}' BEGIN
    INSERT INTO search_fts_{kind} (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS search_{kind}_ad AFTER DELETE ON search_documents
WHEN old.kind = '{kind}' BEGIN
    INSERT INTO search_fts_{kind} (search_fts_{kind}, rowid, text)
    VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS search_{kind}_au AFTER UPDATE ON search_documents BEGIN
    INSERT INTO search_fts_{kind} (search_fts_{kind}, rowid, text)
    SELECT 'delete', old.rowid, old.text WHERE old.kind = '{kind}';
    INSERT INTO search_fts_{kind} (rowid, text)
    SELECT new.rowid, new.text WHERE new.kind = '{kind}';
END;
"""
TABLES = DOCUMENTS + "".join(
    _PER_KIND.replace("{kind}", kind).replace("{tokenizer}", TOKENIZER) for kind in KINDS
)
# the layout before: one FTS5 table of every kind, kept by these triggers
_ONE_TABLE = ("search_fts", "search_documents_ai", "search_documents_ad", "search_documents_au")

COMMON = 256  # a word in more documents (of the kind searched) than this is a common one
_FROM = (
    "FROM {fts} JOIN search_documents d ON d.rowid = {fts}.rowid "
    "WHERE {fts} MATCH ? AND d.kind = ?{scoped}"
)
_HOLDING = "SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT ?)"
_SCORED = f"SELECT d.identity, bm25({{fts}}) {_FROM}"
_RECENT = f"{_SCORED} ORDER BY {{fts}}.rowid DESC LIMIT ?"


def phrase(word: str, begins: bool = False) -> str:
    """FTS5's phrase for one of an agent's words: quoted (a quote inside doubled), matching
    the word's stem, or (``begins``) the words it begins."""
    return '"' + word.replace('"', '""') + ('"*' if begins else '"')


def fts_table(conn: Sql, kind: str) -> str | None:
    """The FTS5 table holding ``kind``'s documents: its own, or on a read-only copy of the
    layout before, the one table of every kind; None for a kind never indexed."""
    if kind not in KINDS:
        return None
    names = [f"search_fts_{kind}", "search_fts"]
    marks = ", ".join("?" * len(names))
    found = {
        row[0]
        for row in conn.execute(
            f"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ({marks})", names
        )
    }
    return next((name for name in names if name in found), None)


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
    holding common words only, and not all of them. Each kind has an FTS5 table of its own,
    so neither the bound nor the reading ever passes over documents of another kind."""
    fts = fts_table(conn, kind)
    if fts is None:
        return {}
    where, scopes = DocumentRows.scoped(visible)
    head = [kind, *scopes]

    def rows(sql: str, match: str, *tail: object) -> list[tuple[str, float]]:
        made = sql.replace("{fts}", fts).replace("{scoped}", where)
        return conn.execute(made, [match, *head, *tail]).fetchall()

    def holding(match: str) -> int:  # of the table's documents: a bound, never a filter
        sql = _HOLDING.replace("{fts}", fts)
        return int(conn.execute(sql, (match, common + 1)).fetchone()[0])

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

    tables: tuple[str, ...] = ("search_documents", *(f"search_fts_{kind}" for kind in KINDS))

    def compact(self, conn: Sql) -> None:
        """FTS5 keeps a dropped document's words in its segments until they merge: merged now."""
        for kind in KINDS:
            conn.execute(f"INSERT INTO search_fts_{kind} (search_fts_{kind}) VALUES ('optimize')")

    def install(self, conn: Sql) -> None:
        made = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'search_fts_node'"
        ).fetchone()
        one_table = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'search_fts'").fetchone()
        outdated = one_table is not None or (made is not None and f"'{TOKENIZER}'" not in made[0])
        if outdated:  # one table of every kind, or another tokenizer: made again, from the
            for name in _ONE_TABLE:  # documents they indexed
                kind = "TABLE" if name == "search_fts" else "TRIGGER"
                conn.execute(f"DROP {kind} IF EXISTS {name}")
            for kind in KINDS:
                conn.execute(f"DROP TABLE IF EXISTS search_fts_{kind}")
        run_script(conn, TABLES)
        self.add_scopes(conn)
        if outdated:
            for kind in KINDS:
                conn.execute(
                    f"INSERT INTO search_fts_{kind} (search_fts_{kind}) VALUES ('rebuild')"
                )

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
        """Whether each FTS5 table agrees with the documents it indexes."""
        try:
            for kind in KINDS:
                conn.execute(
                    f"INSERT INTO search_fts_{kind} (search_fts_{kind}, rank) "
                    "VALUES ('integrity-check', 1)"
                )
        except sqlite3.DatabaseError:  # "database disk image is malformed"
            return False
        return True
