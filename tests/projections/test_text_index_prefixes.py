"""On SQLite the relationships' FTS5 table keeps an index of words' first two letters: a word
no relationship holds is asked as a prefix only if some word there begins with its two
letters (FTS5 seeks an absent prefix by reading the whole list of documents of the word
before it). The check never changes an answer; a table made before it is made again."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from writegate.eventlog import EventLog
from writegate.projections.search import Document
from writegate.projections.search.bm25 import _KEPT_BEGINNING, BEGINS, PREFIXED, scored
from writegate.projections.search.sqlite import TOKENIZER, SqliteTextIndex
from writegate.projections.state import StateProjection
from writegate.projections.state.tables import NODE_ROWS

_TYPES = ("KNOWS", "WORKS_FOR", "LIVES_IN")


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(tmp_path / "index.db", isolation_level=None)
    index = SqliteTextIndex()
    index.install(connection)
    index.put(
        connection,
        [Document(f"r{i}", "relationship", _TYPES[i % 3]) for i in range(30)]
        + [Document(f"n{i}", "node", f"Person\nkerason {i}") for i in range(5)],
    )
    yield connection
    connection.close()


def asked(conn: sqlite3.Connection, query: str) -> tuple[dict[str, float], list[str]]:
    said: list[str] = []
    conn.set_trace_callback(said.append)
    found = scored(conn, query, "relationship", None)
    conn.set_trace_callback(None)
    return found, said


def test_a_word_whose_two_letters_begin_no_relationship_word_is_not_asked_as_a_prefix(
    conn: sqlite3.Connection,
) -> None:
    found, said = asked(conn, "kerason storage")
    assert found == {}
    assert not [sql for sql in said if '"kerason"*' in sql or '"storage"*' in sql]
    assert [sql for sql in said if '"ke"*' in sql]
    assert [sql for sql in said if '"st"*' in sql]


def test_a_word_whose_two_letters_begin_one_is_asked_as_a_prefix(
    conn: sqlite3.Connection,
) -> None:
    found, said = asked(conn, "kno liv")  # no such words; "know" and "live" begin with them
    assert [sql for sql in said if '"kno"*' in sql]
    assert set(found) == {f"r{i}" for i in range(30) if i % 3 != 1}


def test_a_word_beginning_with_a_vowel_is_asked_as_a_prefix_as_before(
    conn: sqlite3.Connection,
) -> None:
    """porter may leave one letter of such a word ("aed" is "a"): its two letters say nothing."""
    _, said = asked(conn, "aed")
    assert [sql for sql in said if '"aed"*' in sql]


def test_without_the_two_letter_index_every_absent_word_is_asked_as_a_prefix(
    conn: sqlite3.Connection,
) -> None:
    """A read-only copy of a log whose table was made before the index: searched as before."""
    without(conn)
    found, said = asked(conn, "kerason kno")
    assert [sql for sql in said if '"kerason"*' in sql]
    assert not [sql for sql in said if '"ke"*' in sql]
    assert set(found) == {f"r{i}" for i in range(30) if i % 3 == 0}


def without(conn: sqlite3.Connection) -> None:
    """The relationships' table as it was made before it kept words' first letters."""
    conn.execute("DROP TABLE search_fts_relationship")
    conn.execute(
        "CREATE VIRTUAL TABLE search_fts_relationship USING fts5 (text, content = "
        f"'search_documents_relationship', content_rowid = 'rowid', tokenize = '{TOKENIZER}')"
    )
    conn.execute("INSERT INTO search_fts_relationship (search_fts_relationship) VALUES ('rebuild')")


def test_install_makes_a_relationship_table_without_the_index_again(
    conn: sqlite3.Connection,
) -> None:
    without(conn)
    before = {q: asked(conn, q)[0] for q in ("know", "kno", "works")}
    SqliteTextIndex().install(conn)
    made = "SELECT sql FROM sqlite_master WHERE name = ?"
    assert PREFIXED in conn.execute(made, ("search_fts_relationship",)).fetchone()[0]
    assert PREFIXED not in conn.execute(made, ("search_fts_node",)).fetchone()[0]
    assert SqliteTextIndex().intact(conn)
    assert {q: asked(conn, q)[0] for q in before} == before


def test_a_writers_open_makes_the_table_again_and_keeps_the_read_model(tmp_path: Path) -> None:
    """Not a new layout of the read model, which a replay would rebuild whole: the open
    finds the table made otherwise and makes it again from the documents it indexes."""
    log = EventLog(tmp_path / "log.db", inline=[StateProjection()])
    conn = log.connection()
    SqliteTextIndex().put(conn, [Document("r", "relationship", "KNOWS")])
    without(conn)
    assert not SqliteTextIndex().current(conn, [NODE_ROWS])
    log.close()
    reader = EventLog(tmp_path / "log.db", inline=[StateProjection()], readonly=True)
    assert not SqliteTextIndex().current(reader.connection(), [NODE_ROWS])  # read as it is
    assert scored(reader.connection(), "kno", "relationship", None).keys() == {"r"}
    reader.close()
    log = EventLog(tmp_path / "log.db", inline=[StateProjection()])
    conn = log.connection()
    assert SqliteTextIndex().current(conn, [NODE_ROWS])
    assert SqliteTextIndex().intact(conn)
    assert scored(conn, "kno", "relationship", None).keys() == {"r"}
    log.close()


_WORDS = st.from_regex(r"[a-z0-9]{1,4}(ed|ing|ies|s|sses|y|ational|ize|ness|e|ll|)", fullmatch=True)


@settings(max_examples=500, deadline=None)
@given(_WORDS)
def test_porter_keeps_the_first_two_letters_of_a_word_the_check_is_asked_of(word: str) -> None:
    """The check is sound: a word the index would find by the word's stem begins with the
    same two letters (FTS5's porter changes only the end of such a word)."""
    if not _KEPT_BEGINNING.fullmatch(word):
        return
    with sqlite3.connect(":memory:", isolation_level=None) as memory:
        memory.execute(f"CREATE VIRTUAL TABLE t USING fts5 (text, tokenize = '{TOKENIZER}')")
        memory.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, t, row)")
        memory.execute("INSERT INTO t (text) VALUES (?)", (word,))
        (stem,) = memory.execute("SELECT term FROM v").fetchone()
        assert stem.startswith(word[:BEGINS])


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=6), st.lists(_WORDS, min_size=1, max_size=3))
def test_the_check_never_changes_an_answer(texts: list[str], query: list[str]) -> None:
    found = []
    for index_made in (lambda c: None, without):
        with sqlite3.connect(":memory:", isolation_level=None) as memory:
            SqliteTextIndex().install(memory)
            docs = [Document(f"r{i}", "relationship", text) for i, text in enumerate(texts)]
            SqliteTextIndex().put(memory, docs)
            index_made(memory)
            found.append(scored(memory, " ".join(query), "relationship", None))
    assert found[0] == found[1]
