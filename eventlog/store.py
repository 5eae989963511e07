"""The SQLite event log: one file, WAL, one ``BEGIN IMMEDIATE`` per append.

An append runs a caller's ``decide`` function inside the write transaction
(``writegate.eventlog.transaction``), so whatever the caller reads there cannot
change before its events commit. Everything an append writes — events, stream
versions, the idempotency record, inline read models — commits together or not at
all. Reading is ``writegate.eventlog.reading``; the tables are ``…tables``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Literal

from writegate.eventlog.appending import Appending
from writegate.eventlog.canonical import GENESIS_HASH
from writegate.eventlog.errors import (
    EventLogError,
    LogBusy,
    LogUnavailable,
    NotAnEventLog,
    one_line,
)
from writegate.eventlog.grouping import CommitGroups
from writegate.eventlog.permissions import make_private_database
from writegate.eventlog.sql import Sql, SqliteConnection
from writegate.eventlog.tables import (
    HEAD,
    create_tables,
    file_format,
    missing_triggers,
)
from writegate.eventlog.tail import tail_before_writing
from writegate.eventlog.transaction import InlineProjector

Durability = Literal["normal", "full"]
WAL_HEADER = 32  # bytes of a -wal file before its first frame
# SQLite's primary codes for a write the file could not take (a full disk, an I/O error):
# the transaction is not committed, so the append may be retried as it was
_FAULTS = (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR)
BUSY_TIMEOUT = 60.0  # seconds a write waits for another connection's write lock by default
# a read-only connection's page cache (SQLite's default: 2 MiB), filled only as pages are
# read: a search at a million nodes reads its rows by identity through b-trees whose upper
# pages a small cache keeps losing (measured: 5 to 9% less CPU a question)
READ_CACHE_KIB = 64 * 1024
SCAN_CACHE_KIB = 2 * 1024  # a whole-log read's (``EventLog.scanning``): SQLite's default
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class WouldWait(Exception):
    """Inside ``EventLog.without_waiting``: a lock the work needed (the write lock) was held
    by another connection, and nothing was written; the caller may do the same work again
    where waiting is allowed. Deliberately no ``EventLogError``: there is no refusal."""


def _busy(exc: sqlite3.OperationalError) -> bool:
    return exc.sqlite_errorcode & 0xFF in _BUSY


def _made_private(path: Path) -> None:
    """The file owner-only before SQLite writes it (and so its -wal and -shm: SQLite gives
    them the file's permissions), as every file holding graph data is (``permissions``)."""
    if str(path) in ("", ":memory:"):  # SQLite's names of a database in no file
        return
    try:
        make_private_database(path)
    except OSError as exc:
        raise EventLogError(f"{path}: {exc.strerror or exc}") from exc


def _copy_with_wal(path: Path, wal: Path) -> Path:
    """``path`` and its ``-wal`` copied into a private temporary folder; the copy's path.
    A copy that fails (a full disk) leaves no folder behind."""
    folder: Path | None = None
    try:
        folder = Path(tempfile.mkdtemp(prefix="writegate-readonly-"))
        copy = folder / path.name
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, f"{copy}-wal")
    except OSError as exc:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise EventLogError(
            f"{path}: on read-only media with commits in its -wal, it is read from a private "
            f"copy, which could not be made in {tempfile.gettempdir()}: "
            f"{exc.strerror or exc}"
        ) from exc
    return copy


class EventLog(Appending):
    """The log in one SQLite file. Safe to share between threads (one connection each)
    and between processes (SQLite's write lock serialises appends)."""

    def __init__(
        self,
        path: str | Path,
        *,
        inline: Sequence[InlineProjector] = (),
        create: bool = True,
        durability: Durability = "normal",
        busy_timeout: float = BUSY_TIMEOUT,
        readonly: bool = False,
    ) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if (readonly or not create) and not self.path.exists():
            raise FileNotFoundError(f"no writegate log at {self.path} (run `writegate init`)")
        if not create and self.path.stat().st_size == 0:  # a log's header is never unwritten
            raise NotAnEventLog(f"{self.path} is empty (0 bytes), not a writegate log")
        self.inline = tuple(inline)
        self.durability = durability
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self.commit_groups = CommitGroups()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self.private_copy: Path | None = None  # where a read-only log is read from, if not here
        if not readonly:  # before anything can write or checkpoint a stray -wal
            _made_private(self.path)
            self._tail_seen = tail_before_writing(self.path, self.busy_timeout, self.inline)
        self._install()

    # -- connections -----------------------------------------------------------------

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit mode: transactions are explicit)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = self._connect()
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                if self.readonly:
                    conn.execute("PRAGMA query_only = ON")
                    conn.execute(f"PRAGMA cache_size = -{READ_CACHE_KIB}")
                else:
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute(f"PRAGMA synchronous = {self.durability.upper()}")
                    # an append's savepoint copies aside each page it changes: past 16 pages
                    # (a write with a resolution index or a text index merge) SQLite spilled
                    # them to a new temporary file, a third of such a write's cost over its SQL
                    conn.execute("PRAGMA temp_store = MEMORY")
            except sqlite3.DatabaseError as exc:  # "file is not a database", "unable to open…"
                raise EventLogError(f"{self.path}: {exc}") from exc
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def disconnect(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)
        conn.close()

    def _connect(self) -> sqlite3.Connection:
        """A connection. A read-only one never writes: ``mode=ro`` (SQLite may still create
        the WAL index beside an auditor's copy). On read-only media, where the index cannot
        be made, ``immutable`` if no commit waits in the ``-wal`` (no writer can exist there
        either); else SQLite could read the file only without the WAL's commits, so the file
        and its WAL are read from a private copy (``private_copy``), never stale."""

        def connect(target: str | Path, uri: bool = False) -> sqlite3.Connection:
            return sqlite3.connect(
                target,
                uri=uri,
                isolation_level=None,
                timeout=self.busy_timeout,
                check_same_thread=False,
                factory=SqliteConnection,
            )

        if not self.readonly:
            return connect(self.path)
        if self.private_copy is not None:
            return connect(f"{self.private_copy.as_uri()}?mode=ro", uri=True)
        uri = self.path.resolve().as_uri()
        try:
            conn = connect(f"{uri}?mode=ro", uri=True)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            if os.access(self.path.parent, os.W_OK):
                raise
            wal = Path(f"{self.path}-wal")
            if not wal.exists() or wal.stat().st_size <= WAL_HEADER:
                return connect(f"{uri}?immutable=1", uri=True)
            with self._lock:
                if self.private_copy is None:
                    self.private_copy = _copy_with_wal(self.path, wal)
            return connect(f"{self.private_copy.as_uri()}?mode=ro", uri=True)

    def describe(self) -> str:
        return str(self.path)

    def fault(self, exc: BaseException) -> LogUnavailable | None:
        if isinstance(exc, sqlite3.OperationalError) and exc.sqlite_errorcode & 0xFF in _FAULTS:
            cause = one_line(exc)
            return LogUnavailable(f"{self.path}: {cause}; nothing was appended", cause=cause)
        return None

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
            if self.private_copy is not None:
                shutil.rmtree(self.private_copy.parent, ignore_errors=True)
                self.private_copy = None
        self._local = threading.local()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _install(self) -> None:
        conn = self.connection()
        version = file_format(conn, self.path)
        if self.readonly:
            if version == 0:
                raise NotAnEventLog(f"{self.path} is not a writegate log (no log tables)")
            return  # read as it is: nothing installed, no read model caught up
        if version != 0 and self._current(conn):
            return  # nothing to write: opening need not wait for another process's lock
        self._begin_write(conn)  # another process writing past the busy timeout: LogBusy
        try:
            if file_format(conn, self.path) == 0:
                create_tables(conn)
            for projector in self.inline:
                projector.install(conn)
                self._catch_up(conn, projector)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        # appends get a connection of their own: one that remade a read model (an FTS5
        # table made again from 10k documents) wrote each later write's index entry about
        # 10% slower for as long as it lived (``bench/bench_search_settings.py``)
        self.disconnect()

    def _current(self, conn: sqlite3.Connection) -> bool:
        """Whether every inline read model is there in its current layout and caught up with
        the log (read in one snapshot; an append keeps them so). Then a command that opens
        the log while another process holds its write lock (a stdio server mid-write) gets
        on at once: its writes wait for the lock, its refusals need not."""
        conn.execute("BEGIN")
        try:
            row = conn.execute(HEAD).fetchone()
            head = row[0] if row else 0
            return all(p.installed(conn) and p.checkpoint(conn) >= head for p in self.inline)
        except sqlite3.OperationalError:  # a read model's tables missing: installed below
            return False
        finally:
            conn.execute("ROLLBACK")

    def _begin_write(self, conn: Sql) -> None:
        try:
            conn.execute("BEGIN IMMEDIATE")  # SQLite's write lock, taken now
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
            if self._alone():
                raise WouldWait(one_line(exc)) from exc
            raise LogBusy(
                f"{self.path}: the write lock was not free within {self.busy_timeout:g} s "
                "(another process is writing to the file); nothing was appended, retry"
            ) from exc

    def _begin_append(self, conn: Sql) -> None:
        self._begin_write(conn)
        if isinstance(conn, SqliteConnection):
            conn.keep()

    def _alone(self) -> bool:
        return bool(getattr(self._local, "no_wait", False))

    def _forgetting(self, conn: Sql) -> None:
        # the connection keeps zeroing what it deletes from then on: a connection's setting
        conn.execute("PRAGMA secure_delete = ON")

    def _after_forget(self) -> None:
        """The WAL's frames still hold the pages as they were before the deletes: copy the
        new pages into the file and truncate the WAL (waits for readers of older snapshots
        only as long as the busy timeout)."""
        self.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def _before_commit(self, conn: Sql, head: int) -> None:
        self._local.wrote = True

    @contextmanager
    def without_waiting(self) -> Iterator[None]:
        """On this thread, inside the block, whatever would wait for another connection's
        lock raises ``WouldWait`` at once instead, and an append commits alone (not grouped
        with other threads'): how a stdio server writes on its event loop yet hands a write
        that would wait to a thread. Raised only while the block has committed nothing, so
        doing the work again cannot write it twice. Nested (a refusal's record, tried without
        waiting inside a stdio write that is), the inner block raises it too and the outer
        one is left as it was."""
        conn = self.connection()
        outer = not self._alone()
        if outer:
            conn.execute("PRAGMA busy_timeout = 0")
            self._local.no_wait, self._local.wrote = True, False
        try:
            yield
        except sqlite3.OperationalError as exc:  # a read in rare cases
            if _busy(exc) and not self._local.wrote:
                raise WouldWait(one_line(exc)) from exc
            raise
        finally:
            if outer:
                self._local.no_wait = False
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction on this thread's connection: everything read through this log
        on this thread inside the block sees the log as of one commit, whatever writers append
        meanwhile (WAL keeps the pages it needs). Checks that compare two reads — the chain
        with the read model, the read model with a replay — are only sound inside one.

        Nested, it joins the outer snapshot; nothing may be appended on this thread inside.
        """
        conn = self.connection()
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")  # deferred: the snapshot is taken by the first read, just below
        try:
            conn.execute(HEAD).fetchall()
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    @contextmanager
    def scanning(self) -> Iterator[None]:
        """SQLite's default page cache on this thread's connection meanwhile: a read-only
        one's (``READ_CACHE_KIB``) would fill with the whole log's pages, read once, and
        hold them to the end (``verify`` of 100k events peaked at 179 MB, not 97)."""
        conn = self.connection()
        kept = int(conn.execute("PRAGMA cache_size").fetchone()[0])
        conn.execute(f"PRAGMA cache_size = -{SCAN_CACHE_KIB}")
        try:
            yield
        finally:
            conn.execute(f"PRAGMA cache_size = {kept}")

    def has_table(self, name: str) -> bool:
        found = self.connection().execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        )
        return found.fetchone() is not None

    def backup(
        self, dest: str | Path, progress: Callable[[int, int], None] | None = None
    ) -> tuple[int, str]:
        """Copy the whole file, as of one commit, to ``dest`` (a new file) while writers go
        on; returns the copy's head. SQLite's online backup reads one snapshot, page for
        page (rowids, triggers, read models, rejections: all as they were): in one step, or
        with ``progress(pages done, pages)`` in steps inside one read transaction, which
        keeps the snapshot (a step may raise to stop it). The copy is left in
        rollback-journal mode, so it can be opened read-only without WAL files; opened for
        writing it returns to WAL."""
        target = Path(dest)
        if target.exists() and target.stat().st_size > 0:
            raise FileExistsError(f"{target} exists (a backup never overwrites)")
        _made_private(target)
        copy = sqlite3.connect(target, isolation_level=None)
        try:
            if progress is None:
                self.connection().backup(copy, pages=-1)
            else:  # a connection of its own: the thread's may write (the job's progress)
                with closing(self._connect()) as conn:
                    conn.execute("BEGIN")  # one snapshot across the steps
                    conn.execute(HEAD).fetchone()
                    conn.backup(copy, pages=256, progress=lambda _, left, n: progress(n - left, n))
                    conn.execute("COMMIT")
            copy.execute("PRAGMA journal_mode = DELETE")
            row = copy.execute(HEAD).fetchone()
        finally:
            copy.close()
        return (row[0], row[1]) if row else (0, GENESIS_HASH)

    def missing_triggers(self) -> list[str]:
        """Append-only triggers that should exist but do not (someone dropped them)."""
        return missing_triggers(self.connection())
