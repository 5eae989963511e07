"""The writes an append's pipelined transaction on PostgreSQL holds and sends together.

psycopg spends tens of microseconds of Python (and a send to the server) on each statement,
so an append costs what its statement count does. Writes nobody reads back before the next
read may be held (``PgConnection.add_rows``, ``PgConnection.held``) and sent together —
before the transaction's next statement that is not a write (a read, a savepoint, the
``COMMIT``) or a write that names a table rows are held for, so every read and every later
write of those rows sees them, and dropped with a ``ROLLBACK``. Only writes whose order
against the transaction's writes of other tables does not matter may be held: they land
after those sent later.

The rows of one held insert go as one part whatever their number: a JSON array of them as
its one parameter (``json_populate_recordset`` over the table's own row type, so each value
is read by its column's type). Rows of an upsert naming one key twice keep the last (an
upsert may change a row once a statement); an upsert that adds to the row it finds takes
them one a statement unless each key is named once. The parts of different tables then go
as one statement (writable ``WITH`` queries, run on one snapshot, none seeing another's
rows: held writes of different tables do not depend on each other), whose few parameters
psycopg parses once and the server prepares once: a lone write's rows, or a batch's, are
one statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

import orjson

Statement = tuple[str, list[Any]]  # SQL in SQLite's spelling, its parameters
# psycopg parses a statement of more parameters again each time it is run (3.5 ms for a
# hundred events' 1,200), or of more characters than 4,096: one of fewer once
CACHED_PARAMETERS = 50
CACHED_LENGTH = 4000
_INSERT = re.compile(
    r"\s*INSERT INTO (\w+) \(([\w\s,]+)\)\s*VALUES\s*\(([?,\s]+)\)\s*(ON CONFLICT \(([\w\s,]+)\)"
    r" DO (NOTHING|UPDATE SET (.*?)))?\s*(WHERE .*)?",
    re.S,
)
_REPLACING = re.compile(r"\s*(\w+) = excluded\.(\w+)\s*")
# the log's own statements sent beside its held rows (the versions' checks) are about the
# rows as they were before them: a statement naming these does not wait for their rows
_UNWATCHED = frozenset({"events", "event_streams"})


class Merged(Protocol):
    """Writes held as one object, which says the statements they come to."""

    tables: ClassVar[tuple[str, ...]]  # the tables they write (a statement naming one waits)
    # whether its statements may run as one (none changes or needs a row another changes)
    together: ClassVar[bool]
    # whether it goes before everything else held (a check of rows as they were before them)
    first: ClassVar[bool]

    def statements(self) -> Iterable[tuple[str, list[tuple[Any, ...]]]]:
        """(SQL, rows): each row one statement's parameters."""
        ...


H = TypeVar("H", bound=Merged)


class _Shape(NamedTuple):
    table: str
    many: str  # the insert of a JSON array of rows, one parameter
    columns: tuple[str, ...]
    key: tuple[int, ...] | None  # an upsert's conflict columns
    replaces: bool  # its update takes every value from the row inserted: the last one stands


@lru_cache(maxsize=256)
def _shape(sql: str) -> _Shape | None:
    """How ``sql``, a one-row insert, inserts rows of a JSON array (None: another form)."""
    match = _INSERT.fullmatch(sql)
    if match is None:
        return None
    table, names, _, conflict, keys, action, updates, where = match.groups()
    columns = tuple(c.strip() for c in names.split(","))
    key: tuple[int, ...] | None = None
    replaces = False
    if conflict and action != "NOTHING":
        key = tuple(columns.index(k.strip()) for k in keys.split(","))
        replaces = all(
            (m := _REPLACING.fullmatch(part)) is not None and m.group(1) == m.group(2)
            for part in updates.split(",")
        )
    rest = f" {conflict}" if conflict else ""
    rest += f" {where}" if where else ""
    listed = ", ".join(columns)
    many = (
        f"INSERT INTO {table} ({listed}) SELECT {listed} "
        f"FROM json_populate_recordset(NULL::{table}, ?::json) WHERE true{rest}"
    )
    return _Shape(table, many, columns, key, replaces)


def _as_json(shape: _Shape, rows: list[tuple[Any, ...]]) -> str | None:
    """The rows as the one parameter of ``shape.many`` (None: a value JSON would not carry,
    or a key named twice by an upsert that adds to its row). Held rows hold text, numbers
    and nulls, as JSON does (a bool would be refused by an integer column either way)."""
    if shape.key is not None and len(rows) > 1:
        last = {tuple(row[i] for i in shape.key): row for row in rows}
        if len(last) < len(rows) and not shape.replaces:
            return None
        rows = list(last.values())
    columns = shape.columns
    try:
        return orjson.dumps([dict(zip(columns, row, strict=True)) for row in rows]).decode()
    except (orjson.JSONEncodeError, ValueError):  # bytes, a lone surrogate: psycopg says
        return None


@lru_cache(maxsize=256)
def _many_rows(sql: str, count: int) -> str:
    """A one-row ``INSERT ... VALUES (...)`` for ``count`` rows."""
    head, row = sql.rsplit("VALUES", 1)
    return f"{head}VALUES {', '.join([row.strip()] * count)}"


class _Part(NamedTuple):
    sql: str
    parameters: list[Any]
    tables: frozenset[str] | None  # what it writes (None: it goes alone, in its order)


def _rows_parts(sql: str, held: list[tuple[Any, ...]]) -> Iterator[_Part]:
    """``held`` rows by ``sql`` (a one-row insert): one part where they go as JSON; else
    statements of their own, as few as psycopg parses once (one a row for an upsert)."""
    shape = _shape(sql)
    if shape is not None:
        text = _as_json(shape, held)
        if text is not None:
            yield _Part(shape.many, [text], frozenset({shape.table}))
            return
        if shape.key is not None:  # each row in order, one a statement
            yield from (_Part(sql, list(row), None) for row in held)
            return
    per = max(1, CACHED_PARAMETERS // len(held[0]))
    for chunk in (held[i : i + per] for i in range(0, len(held), per)):
        yield _Part(_many_rows(sql, len(chunk)), [x for row in chunk for x in row], None)


def _merged_parts(kept: Merged) -> Iterator[_Part]:
    tables = frozenset(kept.tables)
    for number, (sql, rows) in enumerate(kept.statements()):
        if not rows:
            continue
        if _shape(sql) is not None:
            parts = list(_rows_parts(sql, list(rows)))
        else:
            parts = [_Part(sql, list(row), tables if len(rows) == 1 else None) for row in rows]
        if kept.together and number:  # with its first: no other table's part is between
            parts = [p._replace(tables=frozenset()) if p.tables else p for p in parts]
        yield from parts


@lru_cache(maxsize=256)
def _selects(sql: str) -> bool:
    return sql.lstrip().upper().startswith("SELECT")


@lru_cache(maxsize=64)
def _with(sqls: tuple[str, ...]) -> str:
    """One statement running each of ``sqls``: writes, and ``SELECT``s (last) of one row and
    one column each — a check, a NOTIFY — run as the main query's values."""
    writes = [sql for sql in sqls if not _selects(sql)]
    reads = [sql for sql in sqls if _selects(sql)]
    named = ", ".join(f"w{n} AS ({sql})" for n, sql in enumerate(writes))
    main = reads[0] if len(reads) == 1 else f"SELECT {', '.join(f'({r})' for r in reads) or 1}"
    return f"WITH {named} {main}" if writes else main


def _together(parts: list[_Part]) -> Statement:
    if len(parts) == 1:
        return parts[0].sql, parts[0].parameters
    ordered = sorted(parts, key=lambda p: _selects(p.sql))  # a SELECT is the main query
    return _with(tuple(p.sql for p in ordered)), [x for p in ordered for x in p.parameters]


def _grouped(parts: Iterable[_Part]) -> Iterator[Statement]:
    """``parts`` as few statements, in their order: a part goes with those before it
    unless it names one of their tables (or goes alone), or the statement grows too long."""
    group: list[_Part] = []
    tables: set[str] = set()
    length = 0
    for part in parts:
        fits = (
            part.tables is not None
            and not (part.tables & tables)
            and length + len(part.sql) < CACHED_LENGTH
        )
        if group and not fits:
            yield _together(group)
            group, tables, length = [], set(), 0
        if part.tables is None:
            yield part.sql, part.parameters
            continue
        group.append(part)
        tables |= part.tables
        length += len(part.sql) + 10
    if group:
        yield _together(group)


NOTIFY = "SELECT pg_notify(?, ?)"


class Notified:
    """A ``NOTIFY`` sent with the held writes (delivered at the commit, whenever sent)."""

    tables: ClassVar[tuple[str, ...]] = ()
    together: ClassVar[bool] = True
    first: ClassVar[bool] = False

    def __init__(self) -> None:
        self.channel = self.payload = ""

    def statements(self) -> list[tuple[str, list[tuple[Any, ...]]]]:
        return [(NOTIFY, [(self.channel, self.payload)])]


def held(conn: Any, kind: type[H]) -> H | None:
    """``conn``'s ``PgConnection.held`` (None elsewhere, as on SQLite's: write at once)."""
    ask = getattr(conn, "held", None)
    return None if ask is None else ask(kind)


class Held:
    """One transaction's held writes: rows of one-row inserts and merged objects, one of
    each kind, sent as few statements."""

    def __init__(self) -> None:
        self._rows: dict[str, list[tuple[Any, ...]]] = {}
        self._merged: dict[type[Any], Merged] = {}
        self._tables: set[str] = set()

    def add_rows(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
        kept = self._rows.get(sql)
        if kept is None:
            kept = self._rows[sql] = []
            shape = _shape(sql)
            if shape is not None and shape.table not in _UNWATCHED:
                self._tables.add(shape.table)
        kept.extend(rows)

    def merged(self, kind: type[H]) -> H:
        kept = self._merged.get(kind)
        if kept is None:
            kept = self._merged[kind] = kind()
            self._tables.update(kind.tables)
        return kept  # type: ignore[return-value]

    def __bool__(self) -> bool:
        return bool(self._rows or self._merged)

    def touches(self, query: str) -> bool:
        """Whether ``query`` names a table writes are held for (it must come after them)."""
        return any(table in query for table in self._tables)

    def take(self) -> Iterator[Statement]:
        """The statements of everything held, which is let go of."""
        rows, self._rows = self._rows, {}
        merged, self._merged = self._merged, {}
        self._tables = set()

        def parts() -> Iterator[_Part]:
            for kept in merged.values():
                if kept.first:
                    yield from _merged_parts(kept)
            for sql, held in rows.items():
                if held:
                    yield from _rows_parts(sql, held)
            for kept in merged.values():
                if not kept.first:
                    yield from _merged_parts(kept)

        yield from _grouped(parts())

    def drop(self) -> None:
        self._rows, self._merged, self._tables = {}, {}, set()


__all__ = ["NOTIFY", "Held", "Merged", "Notified", "held"]
