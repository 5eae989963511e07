"""The text index on SQLite: FTS5 with BM25, kept by triggers in the writing transaction.

``search_documents`` holds each entity's text; ``search_fts_<kind>`` is an external-content
FTS5 index over the documents of one kind (a view of them), which the triggers keep (the
layout ``sqlite-utils``' ``enable_fts`` makes, once per kind: a search of one kind then never
reads past the documents of another). sqlite-utils itself is not used: ``enable_fts`` runs
``executescript``, which commits the caller's open transaction, and the index must be
created inside the log's install transaction and written inside each append's; its
``quote_fts`` ANDs the words and leaves a query of bare quotes empty, which FTS5 refuses.
The statements are few and all here. A kind whose documents are an owner's rows (``Rows``:
the state's nodes) has its FTS5 table over the owner's view of them instead, kept by
triggers on the owner's table that fire only when a row's text changes.

Words are stemmed (FTS5's ``porter`` over ``unicode61``): on a public long-conversation
benchmark (``bench/bench_recall.py``) stems with the query's stop words left out found a
question's evidence in the top 10 about ten points more often than the words as written.
An index made with another tokenizer is made again on install, from the documents it has.
A search reads a bounded number of documents however common its words (``bm25``).

The relationships' table also keeps an index of each word's first two letters
(``prefix = '2'``): their words are few, each held by very many documents, and FTS5 seeks a
prefix absent from the index by reading, to its end, the list of documents of the word
before it (every name a question asks was such a prefix: 1.7 ms for nothing at 1M
relationships). A search asks the two letters first (``bm25``), which that index answers by
a seek. Nodes and observations have many words, nearly every two letters begin one there,
so the check would spare nothing and the index would double their entries.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterator, Mapping, Sequence

from writegate.eventlog.sql import Sql, run_script
from writegate.language.scopes import Visible
from writegate.projections.search.bm25 import KINDS, PREFIXED, content_of, fts_table, phrase, scored
from writegate.projections.search.contract import (
    Document,
    DocumentRows,
    Hit,
    Rows,
    parse_cursor,
    search_words,
)

TOKENIZER = "porter unicode61 remove_diacritics 2"
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
    tokenize = '{tokenizer}'{options}
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
# a kind whose documents are an owner's rows (``Rows``): FTS5 over the owner's view of them,
# kept by triggers on the owner's table, which fire only when a row's text changes
_IN_ROWS = """
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts_{kind} USING fts5 (
    text, content = '{view}', content_rowid = 'rowid', tokenize = '{tokenizer}'{options}
);
CREATE TRIGGER IF NOT EXISTS search_{kind}_rows_ai AFTER INSERT ON {table}
WHEN new.text IS NOT NULL BEGIN
    INSERT INTO search_fts_{kind} (rowid, text) VALUES (new.{key}, new.text);
END;
CREATE TRIGGER IF NOT EXISTS search_{kind}_rows_ad AFTER DELETE ON {table}
WHEN old.text IS NOT NULL BEGIN
    INSERT INTO search_fts_{kind} (search_fts_{kind}, rowid, text)
    VALUES ('delete', old.{key}, old.text);
END;
CREATE TRIGGER IF NOT EXISTS search_{kind}_rows_au AFTER UPDATE OF text ON {table}
WHEN old.text IS NOT new.text BEGIN
    INSERT INTO search_fts_{kind} (search_fts_{kind}, rowid, text)
    SELECT 'delete', old.{key}, old.text WHERE old.text IS NOT NULL;
    INSERT INTO search_fts_{kind} (rowid, text)
    SELECT new.{key}, new.text WHERE new.text IS NOT NULL;
END;
"""
OPTIONS = {"relationship": PREFIXED}  # a kind's further FTS5 options
# the layout before: one FTS5 table of every kind, kept by these triggers
_ONE_TABLE = ("search_fts", "search_documents_ai", "search_documents_ad", "search_documents_au")


def _tables(rows: Mapping[str, Rows]) -> str:
    """Every kind's FTS5 table, views and triggers: over the documents' table, or over the
    rows ``rows`` names for its kind."""
    made = []
    for kind in KINDS:
        held = rows.get(kind)
        sql = _PER_KIND if held is None else _IN_ROWS
        if held is not None:
            sql = sql.replace("{view}", held.view).replace("{table}", held.table)
            sql = sql.replace("{key}", held.key)
        sql = sql.replace("{kind}", kind).replace("{tokenizer}", TOKENIZER)
        made.append(sql.replace("{options}", OPTIONS.get(kind, "")))
    return DOCUMENTS + "".join(made)


TABLES = _tables({})  # every kind in the documents' table (an index no owner hands rows)


def _made(conn: Sql) -> dict[str, str]:
    """Each kind's FTS5 table as it was made (its ``CREATE`` statement), by name."""
    names = ["search_fts", *(f"search_fts_{kind}" for kind in KINDS)]
    marks = ", ".join("?" * len(names))
    sql = f"SELECT name, sql FROM sqlite_master WHERE name IN ({marks})"
    return dict(conn.execute(sql, names).fetchall())


def _views(conn: Sql) -> list[str]:
    """The owners' views of the kinds whose documents are their rows."""
    contents = [content_of(made) for made in _made(conn).values()]
    return [content for content in contents if content and not content.startswith("search_")]


def _lacks_options(made: str | None, kind: str) -> bool:
    """Whether a kind's FTS5 table was made without the options it now has (none: not made)."""
    if made is None:
        return False
    wanted = f"'{TOKENIZER}'{OPTIONS.get(kind, '')}"
    return not made.rstrip().removesuffix(")").rstrip().endswith(wanted)


def _moved(made: str | None, kind: str, rows: Mapping[str, Rows]) -> bool:
    """Whether a kind's FTS5 table indexes other documents than it now does: the documents'
    table where an owner's rows hold them now, or the reverse (none: not made)."""
    if made is None:
        return False
    held = rows.get(kind)
    return content_of(made) != (f"search_documents_{kind}" if held is None else held.view)


class SqliteTextIndex(DocumentRows):
    """The text index in a SQLite log's file."""

    tables: tuple[str, ...] = ("search_documents", *(f"search_fts_{kind}" for kind in KINDS))
    follows_rows = True

    def compact(self, conn: Sql) -> None:
        """FTS5 keeps a dropped document's words in its segments until they merge: merged now."""
        for part in self.parts(conn):
            self.optimize(conn, part)

    def parts(self, conn: Sql) -> list[str]:
        """Each kind's FTS5 table: a write adds a segment, merged into larger ones as they
        accumulate (``automerge``), and a phrase's probe seeks every segment (a gate-built
        log's node table at 100k had 24)."""
        made = _made(conn)
        return [name for name in (f"search_fts_{kind}" for kind in KINDS) if name in made]

    def optimize(self, conn: Sql, part: str) -> None:
        """FTS5's ``optimize``: the table's segments merged into one."""
        if part not in self.parts(conn):
            raise ValueError(f"no part {part!r} in the text index")
        conn.execute(f"INSERT INTO {part} ({part}) VALUES ('optimize')")

    def current(self, conn: Sql, rows: Sequence[Rows] = ()) -> bool:
        """Whether each kind's FTS5 table is made with its tokenizer and options, over the
        documents it now indexes (a log's open remakes one that is not: 30 s for 3M
        relationships, against hours of replay)."""
        made, held = _made(conn), {r.kind: r for r in rows}
        tables = {kind: made.get(f"search_fts_{kind}") for kind in KINDS}
        return "search_fts" not in made and not any(
            _lacks_options(table, kind) or _moved(table, kind, held)
            for kind, table in tables.items()
        )

    def install(self, conn: Sql, rows: Sequence[Rows] = ()) -> None:
        made, held = _made(conn), {r.kind: r for r in rows}
        node = made.get("search_fts_node")
        outdated = "search_fts" in made or (node is not None and f"'{TOKENIZER}'" not in node)
        if outdated:  # one table of every kind, or another tokenizer: made again, from the
            for name in _ONE_TABLE:  # documents they indexed
                kind = "TABLE" if name == "search_fts" else "TRIGGER"
                conn.execute(f"DROP {kind} IF EXISTS {name}")
        moved = [kind for kind in KINDS if _moved(made.get(f"search_fts_{kind}"), kind, held)]
        for kind in moved:  # what kept its documents goes (while the other kinds' triggers
            for suffix in ("ai", "ad", "au", "rows_ai", "rows_ad", "rows_au"):  # can write)
                conn.execute(f"DROP TRIGGER IF EXISTS search_{kind}_{suffix}")
            conn.execute(f"DROP VIEW IF EXISTS search_documents_{kind}")
            conn.execute("DELETE FROM search_documents WHERE kind = ?", (kind,))
        remade = [  # every kind, or one whose table lacks its options or moved: made again
            kind
            for kind in KINDS
            if outdated or kind in moved or _lacks_options(made.get(f"search_fts_{kind}"), kind)
        ]
        for kind in remade:  # its triggers stay, writing into the table made again
            conn.execute(f"DROP TABLE IF EXISTS search_fts_{kind}")
        run_script(conn, _tables(held))
        self.add_scopes(conn)
        for kind in remade:
            conn.execute(f"INSERT INTO search_fts_{kind} (search_fts_{kind}) VALUES ('rebuild')")

    def documents(self, conn: Sql) -> Iterator[Document]:
        """The documents' table's and each owner's rows', merged in identity order."""
        views = [f"SELECT {self._COLUMNS} FROM {view} ORDER BY identity" for view in _views(conn)]
        read = [(Document(*row) for row in conn.execute(sql)) for sql in views]
        return heapq.merge(super().documents(conn), *read, key=lambda d: d.identity)

    def documents_of(self, conn: Sql, identities: Sequence[str]) -> list[Document]:
        return self.documents_in(conn, ["search_documents", *_views(conn)], identities)

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
        top = limit if start is None else None  # past a cursor: every hit, to find its place
        found = scored(conn, query, kind, visible, top=top)
        hits = sorted((score, identity) for identity, score in found.items())
        if start is not None:
            hits = [hit for hit in hits if hit > start]
        return [Hit(identity, score) for score, identity in hits[:limit]]

    def matched(
        self, conn: Sql, query: str, kind: str, identities: Sequence[str]
    ) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {identity: [] for identity in identities}
        table = fts_table(conn, kind)
        if table is None or not found:
            return found
        fts, _, documents = table
        marks = ", ".join("?" * len(found))
        named = f"SELECT rowid, identity FROM {documents} WHERE identity IN ({marks})"
        rowids = dict(conn.execute(named, list(found)).fetchall())
        if not rowids:
            return found
        words = search_words(query)
        if not words:
            return found
        # one statement each: which words any document holds (the others are searched as
        # the words they begin), then which of these documents each word's phrase matches
        held = " UNION ALL ".join(
            f"SELECT {n} WHERE EXISTS (SELECT 1 FROM {fts} WHERE {fts} MATCH ?)"
            for n in range(len(words))
        )
        present = {row[0] for row in conn.execute(held, [phrase(w) for w in words])}
        among = ", ".join("?" * len(rowids))
        each = " UNION ALL ".join(
            f"SELECT {n}, rowid FROM {fts} WHERE {fts} MATCH ? AND rowid IN ({among})"
            for n in range(len(words))
        )
        asked: list[object] = []
        for n, word in enumerate(words):
            asked += [phrase(word, begins=n not in present), *rowids]
        hits = sorted(conn.execute(each, asked).fetchall())
        for n, rowid in hits:
            found[rowids[rowid]].append(words[n])
        return found

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
