"""The writes an append's pipelined transaction on PostgreSQL holds and sends together.

psycopg spends tens of microseconds of Python on each statement, so a batch costs what its
statement count does. Writes nobody reads back before the next read may be held
(``PgConnection.add_rows``, ``PgConnection.held``) and sent as few statements — before the
transaction's next statement that is not a write (a read, a savepoint, the ``COMMIT``), so
every read sees them, and dropped with a ``ROLLBACK``. Only writes whose order against the
transaction's other writes does not matter may be held: they land after writes sent later.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, Protocol, TypeVar

Statement = tuple[str, list[Any]]  # SQL in SQLite's spelling, its parameters
# psycopg parses a statement of more parameters again each time it is run (3.5 ms for a
# hundred events' 1,200), one of up to 50 once: rows go that many parameters a statement
CACHED_PARAMETERS = 50


class Merged(Protocol):
    """Writes held as one object, which says the statements they come to."""

    def statements(self) -> Iterable[tuple[str, list[tuple[Any, ...]]]]:
        """(SQL, rows): each row one statement's parameters."""
        ...


H = TypeVar("H", bound=Merged)


@lru_cache(maxsize=256)
def _many_rows(sql: str, count: int) -> str:
    """A one-row ``INSERT ... VALUES (...)`` for ``count`` rows."""
    head, row = sql.rsplit("VALUES", 1)
    return f"{head}VALUES {', '.join([row.strip()] * count)}"


class Held:
    """One transaction's held writes: rows of one-row inserts, sent as one multi-row insert
    a statement, and merged objects, one of each kind."""

    def __init__(self) -> None:
        self._rows: dict[str, list[tuple[Any, ...]]] = {}
        self._merged: dict[type[Any], Merged] = {}

    def add_rows(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
        self._rows.setdefault(sql, []).extend(rows)

    def merged(self, kind: type[H]) -> H:
        kept = self._merged.get(kind)
        if kept is None:
            kept = self._merged[kind] = kind()
        return kept  # type: ignore[return-value]

    def take(self) -> Iterator[Statement]:
        """The statements of everything held, which is let go of."""
        rows, self._rows = self._rows, {}
        merged, self._merged = self._merged, {}
        for sql, held in rows.items():
            per = max(1, CACHED_PARAMETERS // len(held[0]))
            for chunk in (held[i : i + per] for i in range(0, len(held), per)):
                yield _many_rows(sql, len(chunk)), [x for row in chunk for x in row]
        for kept in merged.values():
            for sql, each in kept.statements():
                for row in each:
                    yield sql, list(row)

    def drop(self) -> None:
        self._rows, self._merged = {}, {}


__all__ = ["Held", "Merged"]
