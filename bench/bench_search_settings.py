"""What FTS5's own settings change in the text index's cost to a single write, through the
gate, and whether the searches still answer the same: side by side in one run, nothing
asserted.

A SQLite log of ``--nodes`` Person nodes (``bench_search.py``'s) is built through the gate's
batches and copied once a variant; each copy is opened by the gate and written once, and its
node table's FTS5 index is then made again with one setting (or kept as the gate built it).
Single ``write_node`` calls of new nodes follow, the copies in a shuffled order each round,
so all meet the same machine; thread CPU p50, and the index's cost against a copy whose
state skips the text step:
  * as built, and remade (FTS5 ``rebuild``) with nothing changed;
  * ``columnsize = 0``, ``detail = column``, ``detail = none``, ``prefix = '2'``;
  * ``automerge`` 8, ``automerge`` 16 with ``crisismerge`` 64, ``pgsz`` 4000;
  * where the cost goes: the text written in the node's row without FTS5's entry (its
    triggers dropped: ``rows only``).
The copy without the index is a log built alike by a state that keeps no text (its node
rows are of the shape they had before the index: ``bench_search.Unindexed``).
Then the answers: ``search_nodes`` and ``graph_query`` of 60 of the bench's questions on
fresh copies of the built log, one a setting, hashed (the same hash: the same answers).

usage: python bench/bench_search_settings.py [--nodes 10000] [--writes 1500]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_search import Unindexed, build, person, queries  # noqa: E402
from writegate.eventlog import Actor, EventLog  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.projections.search.sqlite import TOKENIZER  # noqa: E402
from writegate.projections.state import StateProjection  # noqa: E402
from writegate.projections.state.tables import NODE_ROWS  # noqa: E402

SETTINGS: dict[str, tuple[str, list[tuple[str, int]]]] = {  # table options, config
    "remade": ("", []),
    "columnsize = 0": (", columnsize = 0", []),
    "detail = column": (", detail = column", []),
    "detail = none": (", detail = none", []),
    "prefix = '2'": (", prefix = '2'", []),
    "automerge 8": ("", [("automerge", 8)]),
    "automerge 16, crisismerge 64": ("", [("automerge", 16), ("crisismerge", 64)]),
    "pgsz 4000": ("", [("pgsz", 4000)]),
}


def remake(path: Path, options: str, config: list[tuple[str, int]]) -> None:
    """The node table's FTS5 index made again with ``options`` and ``config``."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TABLE search_fts_node")
    conn.execute(
        "CREATE VIRTUAL TABLE search_fts_node USING fts5 (text, content = "
        f"'{NODE_ROWS.view}', content_rowid = 'rowid', tokenize = '{TOKENIZER}'{options})"
    )
    for key, value in config:
        conn.execute(
            f"INSERT INTO search_fts_node (search_fts_node, rank) VALUES ('{key}', {value})"
        )
    conn.execute("INSERT INTO search_fts_node (search_fts_node) VALUES ('rebuild')")
    conn.close()


def writes(built: Path, folder: Path, nodes: int, count: int) -> None:
    variants: dict[str, tuple[str, list[tuple[str, int]]] | None] = {
        "without the index": None, "as built": None, **SETTINGS, "rows only": None,
    }  # fmt: skip
    gates: dict[str, Gate] = {}
    for i, (name, setting) in enumerate(variants.items()):
        path = folder / f"w{i}.db"
        state = Unindexed() if name == "without the index" else StateProjection()
        if name == "without the index":
            build(path, nodes, state)
        else:
            shutil.copy(built, path)
        gate = gates[name] = Gate(EventLog(path, inline=[state]), default_actor=Actor(agent="b"))
        assert gate.write_node(**person(9_000_000)).status == "written"
        if setting is not None:  # after the gate's open: it would make the table again
            remake(path, *setting)
        if name == "rows only":
            conn = sqlite3.connect(path, isolation_level=None)
            sql = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'search_%'"
            for (trigger,) in conn.execute(sql).fetchall():
                conn.execute(f"DROP TRIGGER {trigger}")
            conn.close()
    cpu: dict[str, list[float]] = {name: [] for name in gates}
    order = list(gates)
    rng = random.Random(5)
    for k in range(count):
        rng.shuffle(order)
        args = person(10_000_000 + k)
        for name in order:
            started = time.thread_time()
            assert gates[name].write_node(**args).status == "written"
            cpu[name].append(time.thread_time() - started)
    for gate in gates.values():
        gate.close()
    floor = statistics.median(cpu["without the index"][50:])
    print(f"{'single write_node, thread CPU p50':34s} {'':>9s}  the index's cost")
    for name, spent in cpu.items():
        p50 = statistics.median(spent[50:])
        print(f"  {name:32s} {p50 * 1e3:6.3f} ms  {(p50 / floor - 1) * 100:+6.1f}%")


def answers(built: Path, folder: Path, nodes: int) -> None:
    asked = [*queries(nodes, 60), "e-mail since 1995", "jo", "well-known 1990s"]
    print("answers of 63 questions (search_nodes, graph_query), hashed:")
    for name, setting in {"as built": None, **SETTINGS}.items():
        path = folder / "answers.db"
        for old in folder.glob("answers.db*"):
            old.unlink()
        shutil.copy(built, path)
        if setting is not None:
            remake(path, *setting)
        try:
            with Gate.open(path, readonly=True) as gate:
                reader, digest = gate.reader(), hashlib.sha256()
                for q in asked:
                    digest.update(reader.search_nodes(q, neighbors=0).model_dump_json().encode())
                    digest.update(reader.graph_query(q).model_dump_json().encode())
            said = digest.hexdigest()[:16]
        except sqlite3.Error as exc:  # a setting the search cannot read
            said = f"fails: {exc}"
        print(f"  {name:32s} {said}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=1500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        built = folder / "built.db"
        build(built, args.nodes)
        conn = sqlite3.connect(built)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        writes(built, folder, args.nodes, args.writes)
        answers(built, folder, args.nodes)


if __name__ == "__main__":
    main()
