"""A search on SQLite reads a bounded number of documents however common its words are,
and still scores each document it returns exactly as FTS5's BM25 over all the words: every
document holding a rare word is found whatever its age; of those holding common words only,
the most recent holding all of them and the most recent holding any are."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from writegate.projections.search import Document
from writegate.projections.search.sqlite import SqliteTextIndex, phrase, scored

COMMON = 8  # the bound under test, small so that a few dozen documents exceed it


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(tmp_path / "index.db", isolation_level=None)
    index = SqliteTextIndex()
    index.install(connection)
    old = [Document(f"old{i:02d}", "node", f"Person\nalice smith {i} gardener") for i in range(20)]
    rare = [Document("rare", "node", "Person\nalice zebra keeper")]
    filler = [Document(f"new{i:02d}", "node", f"Person\nalice jones {i}") for i in range(20)]
    index.put(connection, [*old, *rare, *filler])
    index.put(connection, [Document(f"rel{i}", "relationship", "KNOWS\nalice") for i in range(5)])
    yield connection
    connection.close()


def full_bm25(conn: sqlite3.Connection, query: str) -> dict[str, float]:
    """FTS5's own BM25 over every document holding any of the words: what was scored before."""
    words = " OR ".join(phrase(w) for w in query.split())
    sql = (
        "SELECT d.identity, bm25(search_fts_node) FROM search_fts_node JOIN search_documents d "
        "ON d.rowid = search_fts_node.rowid WHERE search_fts_node MATCH ?"
    )
    return dict(conn.execute(sql, (words,)).fetchall())


def test_each_score_is_fts5s_bm25_over_all_the_words(conn: sqlite3.Connection) -> None:
    for query in ("alice zebra", "alice smith 3", "smith gardener", "zebra", "alice"):
        found = scored(conn, query, "node", None, common=COMMON)
        assert found, query
        exact = full_bm25(conn, query)
        for identity, score in found.items():
            assert score == pytest.approx(exact[identity], rel=1e-9, abs=1e-12), (query, identity)


def test_a_rare_word_finds_its_document_however_old_and_common_the_rest(
    conn: sqlite3.Connection,
) -> None:
    found = scored(conn, "alice zebra", "node", None, common=COMMON)
    assert min(found, key=found.__getitem__) == "rare"  # 41 hold alice: only 1 holds zebra
    assert len(found) <= 1 + COMMON * 2  # the rare word's documents, then bounded passes


def test_an_old_document_holding_every_common_word_is_found(conn: sqlite3.Connection) -> None:
    found = scored(conn, "alice smith", "node", None, common=COMMON)
    assert "old19" in found  # the most recent holding both, though 20 newer hold alice
    assert "old00" not in found  # older than the COMMON most recent holding both


def test_below_the_bound_the_search_is_the_full_bm25(conn: sqlite3.Connection) -> None:
    for query in ("alice zebra", "smith gardener 7", "jones 3"):
        assert scored(conn, query, "node", None, common=1000) == pytest.approx(
            full_bm25(conn, query)
        )


def test_only_documents_of_the_kind_asked_for_are_read(conn: sqlite3.Connection) -> None:
    assert not any(i.startswith("rel") for i in scored(conn, "alice", "node", None, COMMON))
    assert set(scored(conn, "alice", "relationship", None, COMMON)) == {f"rel{i}" for i in range(5)}
