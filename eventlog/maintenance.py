"""Maintenance of a log's read models in a write transaction that appends nothing.

A read model kept in the log's database (the state and its text index) may need work that
no event asks for — merging an index's structures — and that must not run beside an
append: it takes the log's write lock as an append does (``LogBusy`` if another process
holds it past the timeout), so an append waits for it, never the other way round.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from writegate.eventlog.appending import Appending
from writegate.eventlog.errors import EventLogError
from writegate.eventlog.sql import Sql

T = TypeVar("T")


def maintain(log: object, work: Callable[[Sql], T]) -> T:
    """``work`` on ``log``'s connection inside a write transaction, committed if it returns
    and rolled back if it raises. Nothing is appended; the head and checkpoints stay."""
    if not isinstance(log, Appending):
        raise EventLogError(f"{log!r} cannot be written here")
    if log.readonly:
        raise EventLogError(f"{log.describe()} is open read-only")
    conn = log.connection()
    log._begin_write(conn)  # the log's own lock, as its appends take it
    try:
        done = work(conn)
        conn.execute("COMMIT")
    except BaseException as exc:
        log._abandon(conn, exc)
        raise
    return done
