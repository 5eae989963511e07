"""How many nodes each label has, how many relationships each type, and how many nodes are
stubs: kept in ``state_counts`` as the graph tables change, so the overview, ``status`` and
``stats`` read a few rows, not a scan of every node and relationship.

Updated in the writing transaction from each row's before and after (``node`` and
``relationship``: an event applied again changes nothing) and rebuilt by replay like every
state table; a read-only copy of a layout before it was kept is counted by a scan.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

from writegate.eventlog.pgheld import held
from writegate.eventlog.sql import Sql

LABEL, TYPE, STUBS = "label", "type", "stubs"  # the kinds of row; STUBS has one, named ""


_STEP = (
    "INSERT INTO state_counts (kind, name, count) VALUES (?, ?, ?) "
    "ON CONFLICT (kind, name) DO UPDATE SET count = state_counts.count + excluded.count"
)
_GONE = "DELETE FROM state_counts WHERE kind = ? AND name = ? AND count <= 0"


class Steps(Counter[tuple[str, str]]):
    """The steps an append's transaction has taken, held until its next read (``pgheld``):
    a batch of 100 nodes of one label is one step of 100, not 100 statements."""

    tables: ClassVar[tuple[str, ...]] = ("state_counts",)
    together: ClassVar[bool] = False  # a count's delete must see its step
    first: ClassVar[bool] = False

    def statements(self) -> list[tuple[str, list[tuple[Any, ...]]]]:
        steps = sorted((kind, name, step) for (kind, name), step in self.items() if step)
        return [(_STEP, list(steps)), (_GONE, [(k, n) for k, n, step in steps if step < 0])]


def moved(conn: Sql, delta: Counter[tuple[str, str]]) -> None:
    """Counts moved by ``delta`` (a retraction's batch of rows gone at once)."""
    steps = held(conn, Steps)
    if steps is not None:
        steps.update(delta)
        return
    for sql, rows in Steps(delta).statements():
        if rows:
            conn.executemany(sql, rows)


def node(conn: Sql, before: tuple[str, bool] | None, after: tuple[str, bool] | None) -> None:
    """A node's (label, stub) changed from ``before`` to ``after`` (None: absent)."""
    delta: Counter[tuple[str, str]] = Counter()
    for side, step in ((before, -1), (after, 1)):
        if side is not None:
            label, stub = side
            delta[(LABEL, label)] += step
            if stub:
                delta[(STUBS, "")] += step
    moved(conn, delta)


def relationship(conn: Sql, before: str | None, after: str | None) -> None:
    """A relationship's type changed from ``before`` to ``after`` (None: absent)."""
    delta: Counter[tuple[str, str]] = Counter()
    if before is not None:
        delta[(TYPE, before)] -= 1
    if after is not None:
        delta[(TYPE, after)] += 1
    moved(conn, delta)


def kept(conn: Sql) -> tuple[dict[str, int], dict[str, int], int]:
    """The labels' and types' counts, by name, and the stubs'."""
    labels: dict[str, int] = {}
    types: dict[str, int] = {}
    stubs = 0
    rows = conn.execute("SELECT kind, name, count FROM state_counts ORDER BY kind, name")
    for kind, name, count in rows:
        if kind == LABEL:
            labels[str(name)] = int(count)
        elif kind == TYPE:
            types[str(name)] = int(count)
        else:
            stubs = int(count)
    return labels, types, stubs


def scanned(conn: Sql) -> tuple[dict[str, int], dict[str, int], int]:
    """The same counts by a scan of the graph tables (a layout before they were kept)."""
    labels = dict(
        conn.execute("SELECT label, count(*) FROM state_nodes GROUP BY label ORDER BY label")
    )
    types = dict(
        conn.execute("SELECT type, count(*) FROM state_relationships GROUP BY type ORDER BY type")
    )
    stubs = conn.execute("SELECT count(*) FROM state_nodes WHERE stub <> 0").fetchone()[0]
    return labels, types, int(stubs)
