"""The text index on PostgreSQL: a ``tsvector`` column generated from each document's text,
under a GIN index, ranked by ``ts_rank_cd``.

The ``english`` configuration stems words (Snowball) and drops the stop words, as FTS5's
``porter`` tokenizer and the query's ``search_words`` do on SQLite. The query is built from
the agent's words (letters and digits only, so nothing in them is ``to_tsquery`` syntax),
each matching the words its stem begins, any of them (stop words alone: the words they
begin, unstemmed). The score is the rank negated, so
that on both backends a lower score is a better hit. A column generated with another
configuration is made again on install (PostgreSQL computes it for the rows there).
"""

from __future__ import annotations

from collections.abc import Sequence

from writegate.eventlog.sql import Sql
from writegate.language.scopes import Visible
from writegate.projections.search.contract import (
    STOP_WORDS,
    DocumentRows,
    Hit,
    Rows,
    parse_cursor,
    search_words,
)

CONFIGURATION = "english"
_WORDS = f"words tsvector GENERATED ALWAYS AS (to_tsvector('{CONFIGURATION}', text)) STORED"
TABLES = f"""
CREATE TABLE IF NOT EXISTS search_documents (
    identity TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    {_WORDS},
    scope_from TEXT NOT NULL DEFAULT 'default',
    scope_to TEXT NOT NULL DEFAULT 'default'
);
CREATE INDEX IF NOT EXISTS search_documents_words ON search_documents USING GIN (words)
"""
_MADE_WITH = (  # the generated column's expression, as PostgreSQL keeps it
    "SELECT generation_expression FROM information_schema.columns WHERE table_schema = "
    "current_schema() AND table_name = 'search_documents' AND column_name = 'words'"
)

_HITS = (
    "SELECT identity, -ts_rank_cd(words, q)::float8 AS score "
    "FROM search_documents, to_tsquery(?::regconfig, ?) AS q "
    "WHERE words @@ q AND kind = ?{scoped}"
)
_FIRST = f"SELECT identity, score FROM ({_HITS}) AS hits ORDER BY score, identity LIMIT ?"
_NEXT = (
    f"SELECT identity, score FROM ({_HITS}) AS hits "
    "WHERE score > ? OR (score = ? AND identity > ?) ORDER BY score, identity LIMIT ?"
)


def ts_query(query: str) -> tuple[str, str]:
    """``to_tsquery``'s configuration and text for an agent's words: stop words alone are
    looked for as written (``simple``), since ``english`` would drop them all."""
    found = search_words(query)
    stops = bool(found) and all(w in STOP_WORDS for w in found)
    return ("simple" if stops else CONFIGURATION), " | ".join(f"{w}:*" for w in found)


class PostgresTextIndex(DocumentRows):
    """The text index in a PostgreSQL log's database."""

    tables: tuple[str, ...] = ("search_documents",)

    follows_rows = False  # every kind's documents are rows of its own table

    def install(self, conn: Sql, rows: Sequence[Rows] = ()) -> None:
        made = conn.execute(_MADE_WITH).fetchone()
        if made is not None and f"'{CONFIGURATION}'" not in str(made[0]):
            conn.execute("ALTER TABLE search_documents DROP COLUMN words")  # drops its index
            conn.execute(f"ALTER TABLE search_documents ADD COLUMN {_WORDS}")
        for statement in TABLES.split(";"):
            conn.execute(statement)
        self.add_scopes(conn)

    def parts(self, conn: Sql) -> list[str]:
        return ["search_documents_words"]  # the GIN index of every kind's words

    def optimize(self, conn: Sql, part: str) -> None:
        """GIN's pending list (where ``fastupdate`` puts a write's entries, which every
        probe scans) merged into the index, and the planner's statistics of the documents
        taken again. ``VACUUM`` cannot run in a transaction: it is autovacuum's."""
        if part not in self.parts(conn):
            raise ValueError(f"no part {part!r} in the text index")
        conn.execute("SELECT gin_clean_pending_list(?::regclass)", (part,))
        conn.execute("ANALYZE search_documents")

    def matched(
        self, conn: Sql, query: str, kind: str, identities: Sequence[str]
    ) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {identity: [] for identity in identities}
        configuration, _ = ts_query(query)
        words = search_words(query)
        if not words or not found:
            return found
        tests = ", ".join("words @@ to_tsquery(?::regconfig, ?)" for _ in words)
        marks = ", ".join("?" * len(found))
        sql = (
            f"SELECT identity, {tests} FROM search_documents "
            f"WHERE kind = ? AND identity IN ({marks})"
        )
        asked = [value for w in words for value in (configuration, f"{w}:*")]
        for identity, *met in conn.execute(sql, [*asked, kind, *found]):
            found[identity] = [w for w, hit in zip(words, met, strict=True) if hit]
        return found

    def search(
        self,
        conn: Sql,
        query: str,
        kind: str,
        limit: int,
        after: str | None = None,
        visible: Visible = None,
    ) -> list[Hit]:
        configuration, match = ts_query(query)
        start = None if after is None else parse_cursor(after)  # refused whatever the query
        if not match:
            return []
        scoped, scopes = self.scoped(visible)
        head = [configuration, match, kind, *scopes]
        tail: list[object] = [limit]
        sql = _FIRST
        if start is not None:
            sql, tail = _NEXT, [start[0], start[0], start[1], limit]
        rows = conn.execute(sql.replace("{scoped}", scoped), [*head, *tail])
        return [Hit(row[0], float(row[1])) for row in rows]
