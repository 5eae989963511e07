"""What the log's code needs of a database connection, and small SQL helpers.

``Sql`` is the part of a DB-API connection the shared code uses; ``sqlite3.Connection``
is one, and ``postgres.PgConnection`` adapts psycopg's to it (placeholders and all), so
appending, reading and the inline read models are written once for both databases.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

M = TypeVar("M")


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ..., /) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Sql(Protocol):
    """A connection in autocommit mode whose transactions are explicit (``BEGIN`` …)."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any: ...

    @property
    def in_transaction(self) -> bool: ...


def sent(conn: Sql, sql: str, parameters: Any = (), /) -> None:
    """Run a statement whose result nobody reads (a write): PostgreSQL's connection sends it
    on the cursor its append's pipeline keeps for such statements (``PgConnection.send``)."""
    send = getattr(conn, "send", None)  # sqlite3's connection has none: it reads in process
    if send is not None:
        send(sql, parameters)
    else:
        conn.execute(sql, parameters)


def inserted(conn: Sql, sql: str, rows: Iterable[tuple[Any, ...]], /) -> None:
    """Insert ``rows`` by a one-row ``INSERT``: on PostgreSQL held, to go as one statement
    (``PgConnection.add_rows``, which says which tables may be)."""
    add = getattr(conn, "add_rows", None)
    if add is not None:
        add(sql, rows)
    else:
        conn.executemany(sql, rows)


def remembered(conn: Sql, kind: type[M], /) -> M | None:
    """What the open append's transaction keeps of a read model's rows
    (``PgConnection.remembered``, ``SqliteConnection.remembered``); None outside one."""
    keep = getattr(conn, "remembered", None)
    return keep(kind) if keep is not None else None


def one_of(memo: dict[type[Any], Any] | None, kind: type[M]) -> M | None:
    """The one ``kind()`` an open transaction's ``memo`` keeps, made on first ask (None:
    no transaction keeps one)."""
    if memo is None:
        return None
    kept = memo.get(kind)
    if kept is None:
        kept = memo[kind] = kind()
    return kept


class SqliteConnection(sqlite3.Connection):
    """sqlite3's connection, keeping what an append's transaction has read of a read
    model's rows from its ``BEGIN`` (``keep``) to its end, as ``PgConnection`` does: a node
    write asks for its node's row four times (the checks, the state's update, its scope,
    its text), each a statement and a row built, though no round trip. Forgotten on
    ``COMMIT`` or ``ROLLBACK``, on ``ROLLBACK TO`` a savepoint (what was read since may be
    undone), and once no transaction is open (SQLite rolls one back itself on a full disk
    or an I/O error)."""

    _memo: dict[type[Any], Any] | None = None

    def keep(self) -> None:
        """An append's transaction has begun: rows read from now on are kept."""
        self._memo = {}

    def remembered(self, kind: type[M]) -> M | None:
        if self._memo is not None and not self.in_transaction:
            self._memo = None
        return one_of(self._memo, kind)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        if self._memo is not None and sql.startswith(("COMMIT", "ROLLBACK")):
            self._memo = {} if sql.startswith("ROLLBACK TO") else None
        return super().execute(sql, parameters)


def statements(script: str) -> Iterator[str]:
    """Split a script into complete statements (triggers keep their inner ';').

    ``executescript`` would commit the open transaction first; executing statement by
    statement keeps installation inside the caller's transaction.
    """
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                yield pending.strip()
            pending = ""
    if pending.strip():
        raise ValueError(f"incomplete SQL statement: {pending.strip()[:80]}")


def run_script(conn: Sql, script: str) -> None:
    for statement in statements(script):
        conn.execute(statement)


def create_once(conn: Sql, script: str, present: Callable[[], bool]) -> None:
    """Run a creating ``script`` in one write transaction. A creation that loses a race with
    another process's stands down when ``present()`` finds the tables there: PostgreSQL's
    ``IF NOT EXISTS`` is no guard against two transactions creating them at once."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        run_script(conn, script)
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:  # a full disk's failed COMMIT ended it already
            conn.execute("ROLLBACK")
        if not isinstance(exc, Exception) or not present():
            raise


def has_column(conn: Sql, table: str, column: str) -> bool:
    """Whether ``table`` (in the connection's schema) has ``column``: a layout that adds a
    column to a table older files already have adds it with ``ALTER TABLE``."""
    if isinstance(conn, sqlite3.Connection):
        sql = "SELECT 1 FROM pragma_table_info(?) WHERE name = ?"
    else:
        sql = (
            "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = ? AND column_name = ?"
        )
    return conn.execute(sql, (table, column)).fetchone() is not None
