"""The writes an append's pipelined transaction on PostgreSQL holds and sends together.

psycopg spends tens of microseconds of Python (and a send to the server) on each statement,
so a batch costs what its statement count does. Writes nobody reads back before the next
read may be held (``PgConnection.add_rows``, ``PgConnection.held``) and sent as few
statements — before the transaction's next statement that is not a write (a read, a
savepoint, the ``COMMIT``) or a write that names a table rows are held for, so every read
and every later write of those rows sees them, and dropped with a ``ROLLBACK``. Only writes
whose order against the transaction's writes of other tables does not matter may be held:
they land after those sent later.

The rows of one held insert go as one statement whatever their number: a JSON array of
them as its one parameter (``json_populate_recordset`` over the table's own row type, so
each value is read by its column's type), which psycopg parses once and the server prepares
once, as it does a one-row insert. Rows of an upsert that name the same key twice keep the
last (an upsert may change a row once a statement); an upsert that adds to what a row holds
is sent a row a statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

import orjson

Statement = tuple[str, list[Any]]  # SQL in SQLite's spelling, its parameters
# psycopg parses a statement of more parameters again each time it is run (3.5 ms for a
# hundred events' 1,200), one of up to 50 once
CACHED_PARAMETERS = 50
_INSERT = re.compile(
    r"\s*INSERT INTO (\w+) \(([\w\s,]+)\)\s*VALUES\s*\(([?,\s]+)\)\s*(ON CONFLICT \(([\w\s,]+)\)"
    r" DO (NOTHING|UPDATE SET (.*?)))?\s*(WHERE .*)?",
    re.S,
)
_REPLACING = re.compile(r"\s*(\w+) = excluded\.(\w+)\s*")
_PLAIN = (str, int, float, type(None))


class Merged(Protocol):
    """Writes held as one object, which says the statements they come to."""

    tables: ClassVar[tuple[str, ...]]  # the tables they write (a statement naming one waits)

    def statements(self) -> Iterable[tuple[str, list[tuple[Any, ...]]]]:
        """(SQL, rows): each row one statement's parameters."""
        ...


H = TypeVar("H", bound=Merged)


class _Shape(NamedTuple):
    table: str
    many: str  # the insert of a JSON array of rows, one parameter
    columns: tuple[str, ...]
    key: tuple[int, ...] | None  # an upsert's conflict columns: one row a key a statement


@lru_cache(maxsize=256)
def _shape(sql: str) -> _Shape | None:
    """How ``sql``, a one-row insert, inserts many rows in one statement (None: it cannot
    — an upsert adding to the row it finds, a statement of another form)."""
    match = _INSERT.fullmatch(sql)
    if match is None:
        return None
    table, names, _, conflict, keys, action, updates, where = match.groups()
    columns = tuple(c.strip() for c in names.split(","))
    key: tuple[int, ...] | None = None
    if conflict and action != "NOTHING":
        if not all(
            (m := _REPLACING.fullmatch(part)) and m.group(1) == m.group(2)
            for part in updates.split(",")
        ):
            return None  # it adds to the row: rows of one key must go one by one, in order
        key = tuple(columns.index(k.strip()) for k in keys.split(","))
    rest = f" {conflict}" if conflict else ""
    rest += f" {where}" if where else ""
    listed = ", ".join(columns)
    many = (
        f"INSERT INTO {table} ({listed}) SELECT {listed} "
        f"FROM json_populate_recordset(NULL::{table}, ?::json) WHERE true{rest}"
    )
    return _Shape(table, many, columns, key)


@lru_cache(maxsize=256)
def _table(sql: str) -> str | None:
    shape = _shape(sql)
    if shape is not None:
        return shape.table
    match = _INSERT.fullmatch(sql)
    return None if match is None else match.group(1)


@lru_cache(maxsize=256)
def _many_rows(sql: str, count: int) -> str:
    """A one-row ``INSERT ... VALUES (...)`` for ``count`` rows."""
    head, row = sql.rsplit("VALUES", 1)
    return f"{head}VALUES {', '.join([row.strip()] * count)}"


def _as_json(shape: _Shape, rows: list[tuple[Any, ...]]) -> str | None:
    """The rows as the one parameter of ``shape.many`` (None: a value JSON would not carry
    as it is, or a key named twice where a row must keep its first)."""
    if shape.key is not None:
        last = {tuple(row[i] for i in shape.key): row for row in rows}
        rows = list(last.values())
    columns = shape.columns
    for row in rows:
        for value in row:
            if type(value) not in _PLAIN:  # a bool, bytes: as psycopg would adapt them
                return None
    try:
        return orjson.dumps([dict(zip(columns, row, strict=True)) for row in rows]).decode()
    except orjson.JSONEncodeError:  # a lone surrogate, say: psycopg says what is wrong
        return None


def _chunked(sql: str, held: list[tuple[Any, ...]]) -> Iterator[Statement]:
    per = max(1, CACHED_PARAMETERS // len(held[0]))
    for chunk in (held[i : i + per] for i in range(0, len(held), per)):
        yield _many_rows(sql, len(chunk)), [x for row in chunk for x in row]


def rows_statements(sql: str, held: list[tuple[Any, ...]]) -> Iterator[Statement]:
    """The statements that insert ``held`` rows by ``sql`` (a one-row insert): one, where
    its rows can go as JSON; else as few multi-row ones as psycopg parses once (an insert
    of another form, or an upsert that adds to a row: one a row)."""
    if not held:
        return
    shape = _shape(sql)
    if shape is not None and len(held) > 1:
        text = _as_json(shape, held)
        if text is not None:
            yield shape.many, [text]
            return
    if shape is None and _table(sql) is not None and "ON CONFLICT" in sql:
        for row in held:  # an upsert that adds: each row in order, one a statement
            yield sql, list(row)
        return
    yield from _chunked(sql, held)


class Held:
    """One transaction's held writes: rows of one-row inserts, sent as one insert a
    statement, and merged objects, one of each kind."""

    def __init__(self) -> None:
        self._rows: dict[str, list[tuple[Any, ...]]] = {}
        self._merged: dict[type[Any], Merged] = {}
        self._tables: set[str] = set()

    def add_rows(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
        kept = self._rows.get(sql)
        if kept is None:
            kept = self._rows[sql] = []
            table = _table(sql)
            self._tables.add(table if table is not None else sql)
        kept.extend(rows)

    def merged(self, kind: type[H]) -> H:
        kept = self._merged.get(kind)
        if kept is None:
            kept = self._merged[kind] = kind()
            self._tables.update(kind.tables)
        return kept  # type: ignore[return-value]

    def touches(self, query: str) -> bool:
        """Whether ``query`` names a table writes are held for (it must come after them)."""
        return any(table in query for table in self._tables)

    def take(self) -> Iterator[Statement]:
        """The statements of everything held, which is let go of."""
        rows, self._rows = self._rows, {}
        merged, self._merged = self._merged, {}
        self._tables = set()
        for sql, held in rows.items():
            yield from rows_statements(sql, held)
        for kept in merged.values():
            for sql, each in kept.statements():
                if _shape(sql) is not None:
                    yield from rows_statements(sql, list(each))
                else:
                    yield from ((sql, list(row)) for row in each)

    def drop(self) -> None:
        self._rows, self._merged, self._tables = {}, {}, set()


__all__ = ["Held", "Merged", "rows_statements"]
