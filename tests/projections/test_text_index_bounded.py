"""A search on SQLite reads a bounded number of documents however common its words are:
every document holding a rare word is found whatever its age; of those holding common words
only, the most recent holding all of them and the most recent holding any are. Scores are
FTS5's BM25; a common word's weight is told from its share of the recent documents rather
than counted through every document holding it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from writegate.projections.search import Document, bm25
from writegate.projections.search.bm25 import phrase, scored
from writegate.projections.search.sqlite import SqliteTextIndex

COMMON = 8  # the bound under test, small so that a few dozen documents exceed it
COMMON_WORDS = ('"alice"', '"smith"', '"jones"')  # each in more than COMMON


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


def test_a_common_words_weight_comes_from_its_recent_share_its_counts_from_fts5(
    tmp_path: Path,
) -> None:
    index, conn = SqliteTextIndex(), sqlite3.connect(tmp_path / "even.db", isolation_level=None)
    index.install(conn)

    def text(i: int) -> str:  # alpha in every 4th document, beta (twice) in every 10th
        return " ".join(["Person", "alpha" * (i % 4 == 0), "beta beta" * (i % 10 == 0), f"n{i}"])

    docs = [Document(f"d{i:03d}", "node", text(i)) for i in range(400)]
    index.put(conn, docs)
    for query in ("alpha", "alpha beta", "beta n40", "alpha n8"):
        found = scored(conn, query, "node", None, common=COMMON)
        exact = full_bm25(conn, query)
        assert found, query
        for identity, score in found.items():  # weights of 100 and 40 in 400, estimated
            assert score == pytest.approx(exact[identity], rel=0.15), (query, identity)
        best = min(found, key=found.__getitem__)
        assert exact[best] == min(exact.values()), query
    conn.close()


def test_with_rare_words_only_each_score_is_fts5s_own(conn: sqlite3.Connection) -> None:
    for query in ("zebra", "zebra keeper", "3 13"):
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


def test_no_statement_weighs_a_common_word_by_counting_its_documents(
    conn: sqlite3.Connection,
) -> None:
    """FTS5's bm25() counts every document holding each phrase it is asked of: asked only of
    rare ones, whatever the query (alice, smith and jones are common here, zebra rare)."""
    said: list[str] = []
    conn.set_trace_callback(said.append)
    for query in ("alice", "alice smith", "alice zebra", "smith jones zebra"):
        said.clear()
        assert scored(conn, query, "node", None, common=COMMON), query
        weighed = [sql for sql in said if "bm25(" in sql]
        assert all(common not in sql for sql in weighed for common in COMMON_WORDS), query
    conn.set_trace_callback(None)


def test_a_search_reads_each_documents_length_once(conn: sqlite3.Connection) -> None:
    """A document holding a rare word and a common one is scored by both: its length is
    still one read of the index's ``%_docsize``, if it is read at all (an ASCII text the
    search has read is counted instead)."""
    SqliteTextIndex().put(conn, [Document("accented", "node", "Person\nalice zebra naïve")])
    said: list[str] = []
    conn.set_trace_callback(said.append)
    found = scored(conn, "alice zebra", "node", None, common=COMMON)
    conn.set_trace_callback(None)
    assert {"rare", "accented"} <= set(found)
    asked = [
        int(rowid)
        for sql in said
        if "_docsize WHERE id IN" in sql
        for rowid in sql.split("IN (")[1].rstrip(")").split(",")
    ]
    rowids = dict(conn.execute("SELECT identity, rowid FROM search_documents").fetchall())
    assert rowids["accented"] in asked
    assert rowids["rare"] not in asked
    assert len(asked) == len(set(asked))


def test_the_lengths_of_ascii_documents_a_search_has_read_are_counted_not_read(
    conn: sqlite3.Connection,
) -> None:
    """Their text came with their marks: no read of ``%_docsize`` for them, and the same
    scores as the lengths read from it give."""
    said: list[str] = []
    conn.set_trace_callback(said.append)
    counted = {q: scored(conn, q, "node", None, common=COMMON) for q in ("alice", "alice zebra")}
    conn.set_trace_callback(None)
    assert not [sql for sql in said if "_docsize WHERE id IN" in sql]
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(bm25._Index, "counted", lambda self, marked: None)
        for query, found in counted.items():
            assert scored(conn, query, "node", None, common=COMMON) == found


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(min_codepoint=1, max_codepoint=127), max_size=120))
def test_a_counted_length_is_the_one_fts5_keeps(text: str) -> None:
    """unicode61's tokens of an ASCII text are its runs of letters and digits."""
    with sqlite3.connect(":memory:", isolation_level=None) as memory:
        SqliteTextIndex().install(memory)
        SqliteTextIndex().put(memory, [Document("d", "node", text)])
        size = memory.execute("SELECT sz FROM search_fts_node_docsize").fetchone()[0]
        assert sum(bm25._varints(size)) == bm25.ascii_tokens(text)


def test_a_page_names_only_its_hits_and_ranks_as_every_hit_named_would(tmp_path: Path) -> None:
    """Hits are ranked by their rowids and only the page's are named (their identities
    read), ties with the last of them too: the page is the one every hit named gives."""
    index, conn = SqliteTextIndex(), sqlite3.connect(tmp_path / "page.db", isolation_level=None)
    index.install(conn)
    lengths = [*range(30), 3, 3, 3]  # three documents tie with the fourth best
    index.put(
        conn, [Document(f"d{i:02d}", "node", "alpha " + "pad " * n) for i, n in enumerate(lengths)]
    )
    said: list[str] = []
    conn.set_trace_callback(said.append)
    page = index.search(conn, "alpha", "node", 4)
    conn.set_trace_callback(None)
    every = sorted((score, identity) for identity, score in full_bm25(conn, "alpha").items())
    assert [(hit.score, hit.identity) for hit in page] == every[:4]
    named = [sql for sql in said if "search_documents" in sql]
    assert len(named) == 1  # the ranking read none: one read of the page's names
    assert named[0].split("IN (")[1].count(",") + 1 == 7  # the four best, three tied with the last
    assert [hit.identity for hit in index.search(conn, "alpha", "node", 40, page[-1].cursor)] == [
        identity for _, identity in every[4:]
    ]
