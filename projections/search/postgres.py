"""The text index on PostgreSQL: a ``tsvector`` column generated from each document's text,
under a GIN index, ranked by ``ts_rank_cd``.

The ``simple`` configuration (no stemming, no stop words) keeps every word as written, as
FTS5's ``unicode61`` does on SQLite. The query is built from the agent's words (letters and
digits only, so nothing in them is ``to_tsquery`` syntax), each matching the words it
begins, any of them. The score is the rank negated, so that on both backends a lower score
is a better hit.
"""

from __future__ import annotations

from writegate.eventlog.sql import Sql
from writegate.projections.search.contract import DocumentRows, Hit, parse_cursor, words

TABLES = """
CREATE TABLE IF NOT EXISTS search_documents (
    identity TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    words tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED
);
CREATE INDEX IF NOT EXISTS search_documents_words ON search_documents USING GIN (words)
"""

_HITS = (
    "SELECT identity, -ts_rank_cd(words, q)::float8 AS score "
    "FROM search_documents, to_tsquery('simple', ?) AS q WHERE words @@ q AND kind = ?"
)
_FIRST = f"SELECT identity, score FROM ({_HITS}) AS hits ORDER BY score, identity LIMIT ?"
_NEXT = (
    f"SELECT identity, score FROM ({_HITS}) AS hits "
    "WHERE score > ? OR (score = ? AND identity > ?) ORDER BY score, identity LIMIT ?"
)


def ts_query(query: str) -> str:
    """``to_tsquery``'s text for an agent's words."""
    return " | ".join(f"{w}:*" for w in words(query))


class PostgresTextIndex(DocumentRows):
    """The text index in a PostgreSQL log's database."""

    tables: tuple[str, ...] = ("search_documents",)

    def install(self, conn: Sql) -> None:
        for statement in TABLES.split(";"):
            conn.execute(statement)

    def search(
        self, conn: Sql, query: str, kind: str, limit: int, after: str | None = None
    ) -> list[Hit]:
        match = ts_query(query)
        if not match:
            return []
        if after is None:
            rows = conn.execute(_FIRST, (match, kind, limit))
        else:
            score, identity = parse_cursor(after)
            rows = conn.execute(_NEXT, (match, kind, score, score, identity, limit))
        return [Hit(row[0], float(row[1])) for row in rows]
