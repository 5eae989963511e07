"""The event log on PostgreSQL: one history shared by many gate servers.

Appends take one transaction-scoped lock at the start of their transaction (with a lock
timeout), as the ``eventsourcing`` library's Postgres recorder does with ``LOCK TABLE``:
readers go on, writers queue, so ``seq`` is gapless, each hash chains to the head it saw,
and insert order is commit order. The lock is an advisory lock rather than a table lock
because ``LOCK TABLE … EXCLUSIVE`` needs UPDATE, DELETE or TRUNCATE privilege on the
table — exactly what the README's role setup revokes from the application role.
Everything else an append does — the idempotency record, stream versions, the inline read
models in the same database — is ``appending.Appending``, shared with SQLite. Triggers
refuse UPDATE, DELETE and TRUNCATE of the history tables and any insert that does not
chain; the README's role setup also revokes those privileges. Each commit notifies the
channel ``writegate_events`` (the new head's seq), so followers wake at once.

A ``postgresql://`` address is the log's name here; its password is never printed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from writegate.eventlog.appending import Appending
from writegate.eventlog.canonical import GENESIS_HASH
from writegate.eventlog.errors import LogUnavailable, NotAnEventLog
from writegate.eventlog.grouping import CommitGroups
from writegate.eventlog.pgsql import PgConnection
from writegate.eventlog.sql import Sql
from writegate.eventlog.tables import APPEND_ONLY_TABLES, FORMAT_VERSION
from writegate.eventlog.transaction import InlineProjector

CHANNEL = "writegate_events"

_TABLES = f"""
CREATE TABLE IF NOT EXISTS writegate_log (format INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq BIGINT PRIMARY KEY,
    event_id TEXT NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    occurred_at TEXT COLLATE "C" NOT NULL,
    actor TEXT NOT NULL,
    streams TEXT NOT NULL,
    payload TEXT NOT NULL,
    provenance TEXT NOT NULL,
    request TEXT NOT NULL,
    idempotency_key TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS event_streams (
    stream TEXT COLLATE "C" NOT NULL,
    version BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (stream, version)
);
CREATE TABLE IF NOT EXISTS idempotency (
    scope TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    request_hash TEXT NOT NULL,
    first_seq BIGINT NOT NULL,
    last_seq BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE OR REPLACE FUNCTION writegate_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$;
CREATE OR REPLACE FUNCTION writegate_chain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq IS DISTINCT FROM (SELECT COALESCE(MAX(seq), 0) + 1 FROM events)
     OR NEW.prev_hash IS DISTINCT FROM
        COALESCE((SELECT hash FROM events WHERE seq = NEW.seq - 1), '{GENESIS_HASH}') THEN
    RAISE EXCEPTION 'events: seq must be gapless and prev_hash must chain';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER events_gapless_chain BEFORE INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION writegate_chain();
""" + "".join(
    f"""
CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
  FOR EACH ROW EXECUTE FUNCTION writegate_append_only();
CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
  FOR EACH ROW EXECUTE FUNCTION writegate_append_only();
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
  FOR EACH STATEMENT EXECUTE FUNCTION writegate_append_only();"""
    for table in APPEND_ONLY_TABLES
)
TRIGGERS = (
    "events_gapless_chain",
    *(f"{t}_no_{verb}" for t in APPEND_ONLY_TABLES for verb in ("update", "delete", "truncate")),
)


def describe_dsn(dsn: str) -> str:
    """The address without its password (for messages and logs)."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "postgresql://(unparsable address)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


class PostgresEventLog(Appending):
    """The log in one PostgreSQL database (its ``search_path`` schema). Safe to share
    between threads (one connection each) and between processes and hosts."""

    AGENT = "(e.actor::jsonb ->> 'agent')"

    def __init__(
        self,
        dsn: str,
        *,
        inline: Sequence[InlineProjector] = (),
        create: bool = True,
        readonly: bool = False,
        lock_timeout: float = 60.0,
        connect_timeout: float = 10.0,
    ) -> None:
        self.dsn = dsn
        self.readonly = readonly
        self.create = create and not readonly
        self.inline = tuple(inline)
        self.lock_timeout = lock_timeout
        self.connect_timeout = connect_timeout
        self._local = threading.local()
        self.commit_groups = CommitGroups()
        self._all: list[PgConnection] = []
        self._lock = threading.Lock()
        self._listener: psycopg.Connection[Any] | None = None
        self._install()

    def describe(self) -> str:
        return describe_dsn(self.dsn)

    # -- connections -------------------------------------------------------------------

    def connection(self) -> PgConnection:
        conn: PgConnection | None = getattr(self._local, "conn", None)
        if conn is not None and not conn.usable:  # lost (a restart, a failover): replace it
            with self._lock:
                if conn in self._all:
                    self._all.remove(conn)
            conn = None
        if conn is None:
            try:
                raw = psycopg.connect(
                    self.dsn,
                    autocommit=True,
                    connect_timeout=max(1, round(self.connect_timeout)),
                    application_name="writegate",
                )
            except psycopg.Error as exc:
                raise LogUnavailable(f"{self.describe()}: {_first_line(exc)}") from exc
            if self.readonly:
                raw.execute("SET default_transaction_read_only = on")
            conn = PgConnection(raw, self.describe())
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
            if self._listener is not None:
                self._listener.close()
                self._listener = None
        self._local = threading.local()

    def __enter__(self) -> PostgresEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _format(self, conn: PgConnection) -> int:
        row = conn.execute("SELECT to_regclass('writegate_log'), to_regclass('events')").fetchone()
        if row[0] is None:
            if row[1] is not None:
                raise NotAnEventLog(f"{self.describe()} has events but is not a writegate log")
            return 0
        found = conn.execute("SELECT format FROM writegate_log").fetchone()
        version = int(found[0]) if found else 0
        if version > FORMAT_VERSION:
            raise NotAnEventLog(
                f"{self.describe()} has log format {version}; this writegate reads up to "
                f"{FORMAT_VERSION}"
            )
        return version

    def _install(self) -> None:
        conn = self.connection()
        if not self.create:
            if self._format(conn) == 0:
                raise NotAnEventLog(f"no writegate log in {self.describe()} (run `writegate init`)")
            return
        conn.execute("BEGIN")
        try:
            # servers starting together install once: the others wait here, then find it done
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('writegate install'))")
            if self._format(conn) == 0:
                conn.raw.execute(_TABLES)
                conn.execute("INSERT INTO writegate_log VALUES (?)", (FORMAT_VERSION,))
            for projector in self.inline:
                projector.install(conn)
                self._catch_up(conn, projector)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # -- transactions ------------------------------------------------------------------

    def _begin_write(self, conn: Sql) -> None:
        conn.execute("BEGIN")
        conn.execute(f"SET LOCAL lock_timeout = '{int(self.lock_timeout * 1000)}ms'")
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.events'))")

    def _before_commit(self, conn: Sql, head: int) -> None:
        conn.execute("SELECT pg_notify(?, ?)", (CHANNEL, str(head)))

    @contextmanager
    def snapshot(self) -> Iterator[PgConnection]:
        """One read transaction (REPEATABLE READ: one snapshot for all its statements) on
        this thread's connection; nested, it joins the outer one."""
        conn = self.connection()
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    def has_table(self, name: str) -> bool:
        row = self.connection().execute("SELECT to_regclass(?)", (name,)).fetchone()
        return row[0] is not None

    def missing_triggers(self) -> list[str]:
        present = {
            row[0]
            for row in self.connection().execute(
                "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgenabled <> 'D'"
            )
        }
        return [t for t in TRIGGERS if t not in present]

    def wait_for_append(self, timeout: float, stop: threading.Event | None = None) -> None:
        """Return at the next commit's notification, or after ``timeout`` seconds. The
        listening connection stays open, so a commit between two waits is not missed (its
        notification is queued and ends the next wait at once)."""
        with self._lock:
            listener = self._listener
            if listener is None:
                listener = psycopg.connect(self.dsn, autocommit=True)
                listener.execute(f"LISTEN {CHANNEL}")
                self._listener = listener
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0 and not (stop and stop.is_set()):
            if any(True for _ in listener.notifies(timeout=min(left, 0.25), stop_after=1)):
                return


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


__all__ = ["CHANNEL", "PostgresEventLog", "describe_dsn"]
