"""Opening a log by its name: a file path is SQLite, a ``postgresql://`` address PostgreSQL.

The rest of writegate holds a log through the contract (``contract.Log``) and never asks
which database is under it; this is where the choice is made. psycopg is imported only when
a PostgreSQL address is opened, so SQLite users' start-up does not pay for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from writegate.eventlog.contract import Log
from writegate.eventlog.errors import EventLogError
from writegate.eventlog.store import BUSY_TIMEOUT, Durability, EventLog
from writegate.eventlog.transaction import InlineProjector


def is_postgres(target: str | Path) -> bool:
    """Whether ``--db``'s value names a PostgreSQL database rather than a file."""
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def open_log(
    target: str | Path,
    *,
    inline: Sequence[InlineProjector] = (),
    create: bool = True,
    readonly: bool = False,
    durability: Durability = "normal",
    busy_timeout: float = BUSY_TIMEOUT,
) -> Log:
    """The log at ``target``, with ``inline`` read models kept in its database. A write
    waits up to ``busy_timeout`` seconds for the log's write lock (SQLite's busy timeout,
    PostgreSQL's lock timeout) before it is refused as busy, to be retried."""
    if isinstance(target, str) and "://" in target and not is_postgres(target):
        scheme = target.split("://", 1)[0]
        raise EventLogError(
            f"{scheme}:// is not a log writegate can open: give a SQLite file or a "
            "postgresql:// address"
        )
    if is_postgres(target):
        from writegate.eventlog.postgres import PostgresEventLog  # noqa: PLC0415 - see above

        return PostgresEventLog(
            str(target),
            inline=inline,
            create=create,
            readonly=readonly,
            lock_timeout=busy_timeout,
        )
    return EventLog(
        target,
        inline=inline,
        create=create,
        readonly=readonly,
        durability=durability,
        busy_timeout=busy_timeout,
    )
