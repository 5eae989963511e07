"""The event log on PostgreSQL: one history shared by many gate servers.

Appends take one transaction-scoped lock at the start of their transaction (with a lock
timeout), as the ``eventsourcing`` library's Postgres recorder does with ``LOCK TABLE``:
readers go on, writers queue, so ``seq`` is gapless, each hash chains to the head it saw,
and insert order is commit order. The lock is an advisory lock rather than a table lock
because ``LOCK TABLE … EXCLUSIVE`` needs UPDATE, DELETE or TRUNCATE privilege on the
table — exactly what the README's role setup revokes from the application role. Write
transactions are ``READ COMMITTED`` whatever the database's default, so the head read
after the lock is the last commit's. An append is pipelined (``pgsql``), and a lone one
starts from the head its process's last commit left (``transaction.Known``): one round
trip if ``decide`` reads nothing. The rest — the idempotency record, stream versions, the
inline read models in the same database — is ``appending.Appending``, shared with SQLite.
Each commit notifies the channel ``writegate_events`` (the new head's seq).

Opening checks first, on a connection of its own, that the log is there in the current
layout and that the role has the privileges it needs (one line naming any missing): a
current log is opened without DDL, so the servers' role need not create anything. Only a
log to create, or a read model to create, migrate or catch up, takes the write lock and
writes. Connections come from a pool (``psycopg_pool``); a password is never printed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from writegate.eventlog import errors
from writegate.eventlog.appending import Appending
from writegate.eventlog.errors import LogBusy, LogPermissionDenied, LogUnavailable, one_line
from writegate.eventlog.grouping import CommitGroups
from writegate.eventlog.pgheld import NOTIFY, Notified
from writegate.eventlog.pgsetup import describe_dsn, installed, read_only, resources_fault
from writegate.eventlog.pgsql import WRITE_BEGIN, PgConnection, Raw
from writegate.eventlog.pgtables import KEEP, OWN_TABLES, TABLES, TRIGGERS
from writegate.eventlog.sealing import TABLES as SEALING_TABLES
from writegate.eventlog.sql import Sql, sent
from writegate.eventlog.tables import FORMAT_VERSION, HEAD
from writegate.eventlog.transaction import InlineProjector

CHANNEL = "writegate_events"
# The pool's warnings (a connection lost, a reconnection failing) go where the application's
# logging sends them (``serve`` logs them), never to a command's stderr as stray lines.
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())
POOL_SIZE = 10  # connections one process holds at most (``psycopg_pool``)
POOL_IDLE = 60.0  # seconds a connection beyond the first may stay unused before it is closed


class PostgresEventLog(Appending):
    """The log in one PostgreSQL database (its ``search_path`` schema). Safe to share
    between threads (a pool of connections) and between processes and hosts."""

    AGENT = "(e.actor::jsonb ->> 'agent')"
    starts_from_known = True  # an uncontended append is one round trip (``appending``)
    lean_groups = True  # a group member's writes are held until the next read: undone unsent

    def __init__(
        self,
        dsn: str,
        *,
        inline: Sequence[InlineProjector] = (),
        create: bool = True,
        readonly: bool = False,
        lock_timeout: float = 60.0,
        connect_timeout: float = 10.0,
        pool_size: int = POOL_SIZE,
    ) -> None:
        self.dsn = dsn
        self.readonly = readonly
        self.create = create and not readonly
        self.inline = tuple(inline)
        self.lock_timeout = lock_timeout
        self.connect_timeout = connect_timeout
        self._local = threading.local()
        self.commit_groups = CommitGroups()
        self._listener: Raw | None = None
        self._listening = threading.Lock()
        self._lent = 0  # the pool's connections out with this log's threads
        self._lending = threading.Lock()
        self._checking = threading.Lock()  # held while the pool checks its connections
        must_write = self._probe()
        self._pool: ConnectionPool[Raw] = ConnectionPool(
            dsn,
            kwargs=self._connect_options(),
            min_size=1,
            max_size=pool_size,
            timeout=connect_timeout,
            max_idle=POOL_IDLE,
            configure=read_only if readonly else None,
            num_workers=1,
            name=f"writegate {self.describe()}",
            open=True,
        )
        try:
            if must_write:
                self._install()
        except BaseException:
            self.close()
            raise

    def describe(self) -> str:
        return describe_dsn(self.dsn)

    def fault(self, exc: BaseException) -> LogUnavailable | None:
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            return self._busy()  # the pipelined lock, said at the append's first read
        return resources_fault(exc, self.describe())

    # -- connections -------------------------------------------------------------------

    def _connect_options(self) -> dict[str, Any]:
        return {
            "autocommit": True,
            "connect_timeout": max(1, round(self.connect_timeout)),
            "application_name": "writegate",
        }

    def _connect(self) -> Raw:
        """A connection of its own (not the pool's), or one line saying why there is none."""
        try:
            return psycopg.connect(self.dsn, **self._connect_options())
        except psycopg.Error as exc:
            raise LogUnavailable(f"{self.describe()}: {one_line(exc)}") from exc

    def connection(self) -> PgConnection:
        conn: PgConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = PgConnection(self._take, self._give, self.describe(), self._check_pool)
            self._local.conn = conn
        return conn

    def disconnect(self) -> None:  # the pool lends a connection per transaction: none held
        self._local.conn = None

    def _take(self) -> Raw:
        try:
            conn = self._pool.getconn()
        except PoolTimeout:
            with self._lending:
                busy = self._lent >= self._pool.max_size
            if not busy:  # none could be made: the database's own reason, if unreachable
                self._connect().close()
            raise LogUnavailable(
                f"{self.describe()}: no connection free within {self.connect_timeout:g} s "
                f"(all {self._pool.max_size} of this process's are in use)"
            ) from None
        with self._lending:
            self._lent += 1
        return conn

    def _give(self, conn: Raw) -> None:
        with self._lending:
            self._lent -= 1
        self._pool.putconn(conn)

    def _check_pool(self) -> None:
        """A connection broke: the pool checks its others in the background (the request
        that found it broken is answered at once), one check at a time."""
        if not self._checking.acquire(blocking=False):
            return  # a check under way sees them all

        def check() -> None:
            try:
                self._pool.check()
            except PoolClosed:
                pass  # the log was closed meanwhile
            finally:
                self._checking.release()

        threading.Thread(target=check, name="writegate pool check", daemon=True).start()

    def close(self) -> None:
        pool: ConnectionPool[Raw] | None = getattr(self, "_pool", None)
        if pool is not None:
            pool.close()
        with self._listening:
            if self._listener is not None:
                self._listener.close()
                self._listener = None
        self._local = threading.local()

    def __enter__(self) -> PostgresEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- opening -----------------------------------------------------------------------

    def _probe(self) -> bool:
        """Look at the log on a connection of its own, so that what stops it from opening
        (unreachable, not a log, a privilege missing) is said at once; return whether
        opening must write: create the log, or create, migrate or catch up a read model."""
        raw = self._connect()
        try:
            conn = PgConnection.over(raw, self.describe())
            if self._format(conn) == 0:
                if not self.create:
                    raise errors.NotAnEventLog(
                        f"no writegate log in {self.describe()} (run `writegate init`)"
                    )
                return True
            self._check_privileges(conn)
            if self.readonly:
                return False
            row = conn.execute(HEAD).fetchone()
            head = row[0] if row else 0  # a commit after it leaves a checkpoint ahead: current
            return not all(installed(conn, p) and p.checkpoint(conn) >= head for p in self.inline)
        finally:
            raw.close()

    def _format(self, conn: PgConnection) -> int:
        row = conn.execute("SELECT to_regclass('writegate_log'), to_regclass('events')").fetchone()
        if row[0] is None:
            if row[1] is not None:
                said = f"{self.describe()} has events but is not a writegate log"
                raise errors.NotAnEventLog(said)
            return 0
        found = conn.execute("SELECT format FROM writegate_log").fetchone()
        version = int(found[0]) if found else 0
        if version > FORMAT_VERSION:
            raise errors.NotAnEventLog(
                f"{self.describe()} has log format {version}; this writegate reads up to "
                f"{FORMAT_VERSION}"
            )
        return version

    def _check_privileges(self, conn: PgConnection) -> None:
        """Every privilege this opening will use, on the tables there are: missing ones are
        one line naming them, rather than a refusal at some later write."""
        needs = dict(OWN_TABLES)
        for projector in self.inline:
            needs.update(dict.fromkeys(projector.tables, KEEP))
        wanted = [(t, p) for t, privileges in needs.items() for p in privileges]
        if self.readonly:
            wanted = [(t, "SELECT") for t in needs]
        rows = conn.execute(
            "SELECT current_user, need.t, need.p "
            "FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS need(t, p, i) "
            "WHERE to_regclass(need.t) IS NOT NULL AND NOT has_table_privilege(need.t, need.p) "
            "ORDER BY need.i",
            ([t for t, _ in wanted], [p for _, p in wanted]),
        ).fetchall()
        if rows:
            lacking: dict[str, list[str]] = {}
            for _, table, privilege in rows:
                lacking.setdefault(table, []).append(privilege)
            said = "; ".join(f"{', '.join(p)} on {t}" for t, p in lacking.items())
            raise LogPermissionDenied(
                f"{self.describe()}: role {rows[0][0]} lacks {said} (grant them as the "
                "README's role setup does)"
            )

    def _install(self) -> None:
        """Create what is missing, under the write lock (servers starting together do it
        once: the others wait, then find it done), and catch the read models up."""
        conn = self.connection()
        try:
            self._begin_write(conn)
            created = self._format(conn) == 0
            if created:
                conn.script(TABLES)
                conn.execute("INSERT INTO writegate_log VALUES (?)", (FORMAT_VERSION,))
            for projector in self.inline:
                if created or not installed(conn, projector, savepoint=True):
                    projector.install(conn)
                self._catch_up(conn, projector)
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if not isinstance(exc, LogPermissionDenied):
                raise
            cause = one_line(exc.__cause__ or exc)
            raise LogPermissionDenied(
                f"{self.describe()}: the log or its read model must be created or migrated, "
                f"which this role may not do ({cause}): run `writegate init` as its owner"
            ) from exc

    # -- transactions ------------------------------------------------------------------

    def _write_opening(self) -> tuple[str, str]:
        """The transaction; the lock, waited for no longer than the timeout set (a volatile
        subquery in ``FROM`` is run first) in the same statement."""
        timeout = f"set_config('lock_timeout', '{int(self.lock_timeout * 1000)}ms', true)"
        lock = "pg_advisory_xact_lock(hashtext(current_schema() || '.events'))"
        return (WRITE_BEGIN, f"SELECT {lock} FROM (SELECT {timeout}) AS timeout")

    def _begin_write(self, conn: Sql) -> None:
        """One round trip; a lock not had in time is ``LogBusy`` (the caller rolls back)."""
        try:
            conn.execute("; ".join(self._write_opening()))
        except psycopg.errors.LockNotAvailable as exc:
            raise self._busy() from exc

    def _begin_append(self, conn: Sql) -> None:
        """The same, pipelined (``pgsql``): a lock not had is said at the first read (``fault``)."""
        assert isinstance(conn, PgConnection)
        conn.begin_pipelined(self._write_opening())

    def _from_database(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.Error)

    def _await_sent(self, conn: Sql) -> None:
        assert isinstance(conn, PgConnection)
        conn.sync()

    def _lean_mark(self, conn: Any) -> int:  # its ``PgConnection``
        return int(conn.flush())

    def _lean_undo(self, conn: Any, mark: Any) -> bool:
        return bool(conn.unsend(mark))

    def _busy(self) -> LogBusy:
        return LogBusy(
            f"{self.describe()}: the log's write lock was not free within {self.lock_timeout:g} "
            "s (other appends held it); nothing was appended, retry (with the same idempotency "
            "key, a write lands once)"
        )

    def _after_forget(self) -> None:  # a deleted row stays in its file until rewritten (owner)
        self.connection().execute("VACUUM (FULL, ANALYZE) " + ", ".join(SEALING_TABLES))

    def _before_commit(self, conn: Sql, head: int) -> None:
        if (notified := conn.held(Notified) if isinstance(conn, PgConnection) else None) is None:
            sent(conn, NOTIFY, (CHANNEL, str(head)))
        else:  # sent with the append's held writes, as one statement
            notified.channel, notified.payload = CHANNEL, str(head)

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
        notification is queued and ends the next wait at once). A new listener (the first,
        or one replacing a connection lost) returns at once: what was committed before it
        listened is for the caller's next read. Raises ``LogUnavailable`` if it cannot."""
        with self._listening:
            listener = self._listener
            if listener is None or listener.closed or listener.broken:
                if listener is not None:
                    listener.close()
                self._listener = None
                listener = self._connect()
                try:
                    listener.execute(f"LISTEN {CHANNEL}")
                except psycopg.Error as exc:  # a hot standby, or the connection dropped
                    listener.close()
                    raise LogUnavailable(
                        f"{self.describe()}: cannot wait for appends ({one_line(exc)})"
                    ) from exc
                self._listener = listener
                return
        deadline = time.monotonic() + timeout
        try:
            while (left := deadline - time.monotonic()) > 0 and not (stop and stop.is_set()):
                if any(True for _ in listener.notifies(timeout=min(left, 0.25), stop_after=1)):
                    return
        except psycopg.OperationalError as exc:
            listener.close()  # the next wait listens anew
            raise LogUnavailable(
                f"{self.describe()}: the connection was lost ({one_line(exc)})"
            ) from exc


__all__ = ["CHANNEL", "PostgresEventLog", "describe_dsn"]
