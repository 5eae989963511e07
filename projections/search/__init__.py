"""The text index of the read model: words of every node and relationship, searched by
relevance. ``contract`` says what an index promises; ``sqlite`` (FTS5) and ``postgres``
(``tsvector``) keep it; ``testing`` is the contract's test case. This package owns the
``search_*`` tables; the state projection (``projections.state``) writes them through it
in each append's transaction (or, on SQLite, writes a node's text in its own row, which the
index follows: ``contract.Rows``)."""

from __future__ import annotations

import sqlite3

from writegate.eventlog.sql import Sql
from writegate.projections.search.contract import (
    Document,
    Hit,
    Rows,
    TextIndex,
    entity_text,
    words,
)
from writegate.projections.search.postgres import PostgresTextIndex
from writegate.projections.search.sqlite import SqliteTextIndex


def text_index_for(conn: Sql) -> TextIndex:
    """The index a connection's database keeps: FTS5 on SQLite, ``tsvector`` elsewhere."""
    return SqliteTextIndex() if isinstance(conn, sqlite3.Connection) else PostgresTextIndex()


__all__ = [
    "Document",
    "Hit",
    "PostgresTextIndex",
    "Rows",
    "SqliteTextIndex",
    "TextIndex",
    "entity_text",
    "text_index_for",
    "words",
]
