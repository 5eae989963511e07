"""What keeping a text index costs one commit, whatever the gate does around it: the floor
under ``bench_search.py``'s "the index's cost at p50". Side by side in one run, nothing
asserted.

Each variant is a SQLite file in the log's settings (WAL, ``synchronous = NORMAL``) holding
a table that stands for the write's own rows and, but for the first, a text index over
``--docs`` documents of the bench's shape. Then transactions of one row plus one new
document, the variants in a shuffled order each round, so all meet the same machine:
  * no index: the row alone;
  * today: the read model's own layout (``projections.search.sqlite.TABLES``: the documents
    table, an external-content FTS5 index kept by triggers);
  * FTS5 options, on the same layout: ``detail=none`` with ``columnsize=0``, and
    ``automerge`` 0;
  * contentless FTS5 (``content=''``: no documents table at all, which a contentless
    index on SQLite before 3.43 cannot delete from without the old text);
  * a B-tree of (word, document) rows instead of FTS5.
Prints each one's added time per commit (p50, and p25..p75 for the spread) and the pages
it adds to the WAL per commit: at a few tens of microseconds a page on this machine, the
pages are the cost.

usage: python bench/bench_search_floor.py [--docs 10000] [--commits 1500]
"""

from __future__ import annotations

import argparse
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from writegate.projections.search.sqlite import TABLES  # noqa: E402

WORDS = ["works", "on", "compilers", "databases", "graphs", "search", "ranking", "agents"]
PAGE = 4096 + 24  # a WAL frame: the page and its header
ROW = "x" * 600  # the write's own rows, roughly an event's size

Put = Callable[[sqlite3.Connection, int], None]


def text(i: int) -> str:
    rng = random.Random(i)
    return f"Person\nAl{i % 7} Kerson {i}\n" + " ".join(rng.sample(WORDS, 4)) + f" since {i}"


def nothing(conn: sqlite3.Connection, i: int) -> None:
    pass


def documents(conn: sqlite3.Connection, i: int) -> None:
    conn.execute(
        "INSERT INTO search_documents (identity, kind, text) VALUES (?, 'node', ?)",
        (f"node-{i}", text(i)),
    )


def fts_only(conn: sqlite3.Connection, i: int) -> None:
    conn.execute("INSERT INTO search_fts (rowid, text) VALUES (?, ?)", (i, text(i)))


def btree(conn: sqlite3.Connection, i: int) -> None:
    found = {w.lower() for w in re.findall(r"[^\W_]+", text(i))}
    conn.executemany("INSERT INTO search_words (word, doc) VALUES (?, ?)", [(w, i) for w in found])


TODAY = TABLES
NO_DETAIL = TABLES.replace(
    "remove_diacritics 2'", "remove_diacritics 2', detail = none, columnsize = 0"
)
CONTENTLESS = "CREATE VIRTUAL TABLE search_fts USING fts5 (text, content = '');"
BTREE = "CREATE TABLE search_words (word TEXT, doc INTEGER, PRIMARY KEY (word, doc)) WITHOUT ROWID;"
NO_MERGE = "INSERT INTO search_fts (search_fts, rank) VALUES ('automerge', 0);"


@dataclass
class Variant:
    name: str
    schema: str
    put: Put
    conn: sqlite3.Connection | None = None
    wal: Path | None = None


def variants() -> list[Variant]:
    return [
        Variant("no index (the row alone)", "", nothing),
        Variant("today: documents + external-content FTS5", TODAY, documents),
        Variant("  the same, detail=none, columnsize=0", NO_DETAIL, documents),
        Variant("  the same, automerge 0", TODAY + NO_MERGE, documents),
        Variant("contentless FTS5 (no documents table)", CONTENTLESS, fts_only),
        Variant("B-tree of (word, document), no FTS5", BTREE, btree),
    ]


def open_variant(v: Variant, folder: Path, index: int, docs: int) -> None:
    path = folder / f"v{index}.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")  # checkpoints at known points, below
    conn.execute("CREATE TABLE writes (id INTEGER PRIMARY KEY, payload TEXT)")
    conn.executescript(v.schema)
    conn.execute("BEGIN")
    for i in range(1, docs + 1):
        v.put(conn, i)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    v.conn, v.wal = conn, folder / f"v{index}.db-wal"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=1500)
    args = parser.parse_args()
    table = variants()
    spent: dict[str, list[float]] = {v.name: [] for v in table}
    pages: dict[str, list[float]] = {v.name: [] for v in table}
    with tempfile.TemporaryDirectory() as scratch:
        for index, v in enumerate(table):
            open_variant(v, Path(scratch), index, args.docs)
        for k in range(args.commits):
            i = args.docs + 1 + k  # the next rowid: each variant numbers its documents alike
            for v in random.Random(k).sample(table, len(table)):
                assert v.conn is not None
                assert v.wal is not None
                before = v.wal.stat().st_size
                started = time.perf_counter()
                v.conn.execute("BEGIN")
                v.conn.execute("INSERT INTO writes (payload) VALUES (?)", (ROW,))
                v.put(v.conn, i)
                v.conn.execute("COMMIT")
                spent[v.name].append(time.perf_counter() - started)
                pages[v.name].append((v.wal.stat().st_size - before) / PAGE)
                if k % 200 == 199:
                    v.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for v in table:
            assert v.conn is not None
            v.conn.close()
    base = statistics.median(spent[table[0].name])
    width = max(len(v.name) for v in table)
    print(f"{'per commit':<{width}}  {'p50 (µs)':>9}  {'added':>7}  {'p25..p75':>11}  pages")
    for v in table:
        ordered = sorted(spent[v.name])
        p25, p50, p75 = (ordered[int(q * len(ordered))] * 1e6 for q in (0.25, 0.5, 0.75))
        print(
            f"{v.name:<{width}}  {p50:>9.0f}  {p50 - base * 1e6:>+7.0f}  "
            f"{p25:>5.0f}..{p75:<5.0f}  {statistics.median(pages[v.name]):.0f}"
        )


if __name__ == "__main__":
    main()
