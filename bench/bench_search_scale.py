"""The text index alone at a million documents: the bounded search beside the BM25 that
scored every match (the query the index ran before), per kind of question, in one run;
nothing asserted.

A SQLite file of that many Person documents (a name of two words from small lists and a
number, a four-word bio of common words: the documents ``bench_search.py``'s nodes make) is
written through ``SqliteTextIndex.put`` in large transactions, which is quick even at 1M
(the gate's own build of a 1M-node log takes over an hour here). Then, per kind of question,
p50 / p99 of ``scored`` (what ``search_nodes`` asks of the index) and of the full BM25, and
how often the person a question names (by number) is in the top two of each.

usage: python bench/bench_search_scale.py [--sizes 100000,1000000] [--questions 60]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_search import FIRST, LAST, WORDS, p, timed  # noqa: E402
from writegate.projections.search import Document  # noqa: E402
from writegate.projections.search.bm25 import phrase, scored  # noqa: E402
from writegate.projections.search.contract import search_words  # noqa: E402
from writegate.projections.search.sqlite import SqliteTextIndex  # noqa: E402

_FULL = (  # every document holding any word scored, as the index searched before
    "SELECT d.identity, bm25(search_fts_node) AS s FROM search_fts_node JOIN search_documents d "
    "ON d.rowid = search_fts_node.rowid WHERE search_fts_node MATCH ? "
    "ORDER BY s, d.identity LIMIT 25"
)


def person(i: int) -> tuple[str, str, str]:
    return FIRST[i % len(FIRST)], LAST[(i // len(FIRST)) % len(LAST)], str(i)


def build(path: Path, size: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = wal")
    index = SqliteTextIndex()
    index.install(conn)
    for start in range(0, size, 50_000):
        conn.execute("BEGIN")
        index.put(
            conn,
            (
                Document(
                    f"Person{{{i}}}",
                    "node",
                    "Person\n"
                    + " ".join(person(i))
                    + "\n"
                    + " ".join(random.Random(i).sample(WORDS, 4)),
                )
                for i in range(start, min(size, start + 50_000))
            ),
        )
        conn.execute("COMMIT")
    return conn


def questions(size: int, count: int) -> dict[str, list[tuple[str, int | None]]]:
    rng = random.Random(3)
    kinds: dict[str, list[tuple[str, int | None]]] = {}
    for _ in range(count):
        i, j = rng.randrange(size), rng.randrange(size)
        (first, last, number), (first2, last2, number2) = person(i), person(j)
        for kind, asked in (
            ("a name and its number", (f"{first} {last} {number}", i)),
            ("a number alone", (number, i)),
            ("a first and last name", (f"{first} {last}", None)),
            ("a common word", (rng.choice(WORDS), None)),
            ("a three-letter prefix", (first[:3].lower(), None)),
            ("two people", (f"{first} {last} {number} {first2} {last2} {number2}", i)),
        ):
            kinds.setdefault(kind, []).append(asked)
    return kinds


def full(conn: sqlite3.Connection, query: str) -> list[str]:
    match = " OR ".join(phrase(w, begins=True) for w in search_words(query))
    return [row[0] for row in conn.execute(_FULL, (match,))]


def bounded(conn: sqlite3.Connection, query: str) -> list[str]:
    found = scored(conn, query, "node", None)
    return sorted(found, key=lambda i: (found[i], i))[:25]


Search = Callable[[sqlite3.Connection, str], list[str]]


def measure(conn: sqlite3.Connection, search: Search, asked: list[tuple[str, int | None]]) -> str:
    spent = timed([lambda q=q: search(conn, q) for q, _ in asked])  # type: ignore[misc]
    named = [(q, n) for q, n in asked if n is not None]
    top = sum(f"Person{{{n}}}" in search(conn, q)[:2] for q, n in named)
    share = f"{top}/{len(named)}" if named else "-"
    return f"{p(spent, 0.5)} / {p(spent, 0.99)}  {share:>5}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--questions", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        for size in (int(s) for s in args.sizes.split(",")):
            conn = build(Path(scratch) / f"index-{size}.db", size)
            print(f"\n{size:,} documents: p50 / p99 ms, and the named person in the top two")
            print(f"{'question':<24}{'bounded (now)':>26}{'every match scored':>26}")
            for kind, asked in questions(size, args.questions).items():
                cells = [measure(conn, search, asked) for search in (bounded, full)]
                print(f"{kind:<24}{cells[0]:>26}{cells[1]:>26}")
            conn.close()


if __name__ == "__main__":
    main()
