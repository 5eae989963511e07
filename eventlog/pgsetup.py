"""What the PostgreSQL log needs around its connections (``postgres``): its address said
without the password, a failure for want of resources told from a refusal, whether a read
model's tables are there, read-only sessions."""

from __future__ import annotations

import psycopg
from psycopg.conninfo import conninfo_to_dict

from writegate.eventlog.errors import LogUnavailable, one_line
from writegate.eventlog.pgsql import PgConnection, Raw
from writegate.eventlog.transaction import InlineProjector


def resources_fault(exc: BaseException, where: str) -> LogUnavailable | None:
    """A statement the server could not carry out for want of resources (class 53: a full
    disk, memory, connections) or by an I/O error (58030): nothing of its transaction is
    kept, so it may be retried as it was once the server has room."""
    if (
        isinstance(exc, psycopg.Error)
        and exc.sqlstate
        and (exc.sqlstate.startswith("53") or exc.sqlstate == "58030")
    ):
        cause = one_line(exc)
        return LogUnavailable(f"{where}: {cause}; nothing was appended", cause=cause)
    return None


def describe_dsn(dsn: str) -> str:
    """The address without its password (for messages and logs)."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "postgresql://(unparsable address)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


def installed(conn: PgConnection, projector: InlineProjector, *, savepoint: bool = False) -> bool:
    """Whether ``projector``'s tables are there in its current layout (no DDL to run). Its
    tables missing is an error inside a transaction: ``savepoint`` keeps that one going."""
    if savepoint:
        conn.execute("SAVEPOINT probe")
    try:
        done = projector.installed(conn)
    except psycopg.errors.UndefinedTable:
        done = False
        if savepoint:
            conn.execute("ROLLBACK TO probe")
    if savepoint:
        conn.execute("RELEASE probe")
    return done


def read_only(conn: Raw) -> None:
    conn.execute("SET default_transaction_read_only = on")
