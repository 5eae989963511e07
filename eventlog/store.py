"""The SQLite event store: one file, WAL, one ``BEGIN IMMEDIATE`` per append.

An append runs a caller's ``decide`` function inside the write transaction, so
whatever the caller reads there (stream versions, a read model kept by an
inline projector) cannot change before its events commit. Everything an append
writes — events, stream versions, the idempotency record, inline read models —
commits together or not at all.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson

from writegate.eventlog.canonical import GENESIS_HASH, canonical_json, chain_hash, event_body
from writegate.eventlog.errors import (
    EventLogError,
    IdempotencyKeyReused,
    NotAnEventLog,
    VersionConflict,
)
from writegate.eventlog.events import (
    Actor,
    DraftEvent,
    Event,
    EventCore,
    format_timestamp,
    parse_timestamp,
    trusted,
)
from writegate.eventlog.sql import run_script
from writegate.eventlog.verify import VerifyReport, verify_rows

APPLICATION_ID = 0x57474C47  # "WGLG": marks a file as a writegate log
FORMAT_VERSION = 1

Durability = Literal["normal", "full"]

CORE_COLUMNS = "seq, event_id, type, occurred_at, actor, streams, payload, provenance"
EVENT_COLUMNS = f"{CORE_COLUMNS}, request, idempotency_key, prev_hash, hash"
_INSERT_EVENT = f"INSERT INTO events ({EVENT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
_INSERT_STREAM = "INSERT INTO event_streams (stream, version, seq) VALUES (?,?,?)"
_STREAM_VERSION = "SELECT MAX(version) FROM event_streams WHERE stream = ?"
_HEAD = "SELECT seq, hash, occurred_at FROM events ORDER BY seq DESC LIMIT 1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
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
    stream TEXT NOT NULL,
    version INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (stream, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS events_gapless_chain BEFORE INSERT ON events
WHEN NEW.seq IS NOT (SELECT IFNULL(MAX(seq), 0) + 1 FROM events)
  OR NEW.prev_hash IS NOT IFNULL((SELECT hash FROM events WHERE seq = NEW.seq - 1), '{genesis}')
BEGIN SELECT RAISE(ABORT, 'events: seq must be gapless and prev_hash must chain'); END;
"""
# Append-only: UPDATE and DELETE fail on every table that records history.
APPEND_ONLY_TABLES = ("events", "event_streams", "idempotency")
_APPEND_ONLY = "".join(
    f"""
CREATE TRIGGER IF NOT EXISTS {table}_no_{verb.lower()} BEFORE {verb} ON {table}
BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;"""
    for table in APPEND_ONLY_TABLES
    for verb in ("UPDATE", "DELETE")
)
APPEND_ONLY_TRIGGERS = tuple(
    f"{table}_no_{verb}" for table in APPEND_ONLY_TABLES for verb in ("update", "delete")
)


class InlineProjector(Protocol):
    """A read model kept in the log's own file, updated inside each append's transaction."""

    name: str

    def install(self, conn: sqlite3.Connection) -> None: ...

    def apply_event(self, conn: sqlite3.Connection, event: EventCore) -> None: ...

    def set_checkpoint(self, conn: sqlite3.Connection, seq: int) -> None: ...

    def checkpoint(self, conn: sqlite3.Connection) -> int: ...


@dataclass(frozen=True)
class AppendOutcome:
    """What an append produced; ``replayed`` means an idempotency key matched an earlier append."""

    events: list[Event]
    replayed: bool = False


@dataclass(frozen=True)
class EventPage:
    events: list[Event]
    next_after: int | None  # pass as ``after_seq`` for the next page; None when done


class Transaction:
    """The open write transaction handed to ``decide``: read versions, emit events."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        actor: Actor,
        idempotency_key: str | None,
        inline: Sequence[InlineProjector],
    ) -> None:
        self.conn = conn
        self._inline = inline
        self._idempotency_key = idempotency_key
        self._idempotency_part = orjson.dumps(idempotency_key)
        self._actor = actor
        self._actor_text = canonical_json(actor.model_dump())
        head = conn.execute(_HEAD).fetchone()
        self.head_seq: int = head[0] if head else 0
        self._prev_hash: str = head[1] if head else GENESIS_HASH
        now = format_timestamp(datetime.now(UTC))
        # occurred_at never runs backwards along the log, so time ranges are seq ranges.
        self.occurred_at: str = max(now, head[2]) if head else now
        self._occurred_part = orjson.dumps(self.occurred_at)
        self._occurred = parse_timestamp(self.occurred_at)
        self._versions: dict[str, int] = {}
        self.events: list[Event] = []

    def stream_version(self, stream: str) -> int:
        """The stream's version including anything emitted earlier in this transaction."""
        version = self._versions.get(stream)
        if version is None:
            version = self.conn.execute(_STREAM_VERSION, (stream,)).fetchone()[0] or 0
            self._versions[stream] = version
        return version

    def emit(self, draft: DraftEvent) -> Event:
        for stream, expected in draft.expected_versions.items():
            current = self.stream_version(stream)
            if current != expected:
                raise VersionConflict(stream, expected, current)
        seq = self.head_seq + 1
        streams = {s: self.stream_version(s) + 1 for s in dict.fromkeys(draft.streams)}
        event_id = new_event_id()
        parts = {
            "actor": self._actor_text,
            "event_id": orjson.dumps(event_id),
            "idempotency_key": self._idempotency_part,
            "occurred_at": self._occurred_part,
            "payload": canonical_json(draft.payload),
            "prev_hash": orjson.dumps(self._prev_hash),
            "provenance": canonical_json(draft.provenance),
            "request": canonical_json(draft.request),
            "seq": str(seq).encode(),
            "streams": canonical_json(streams),
            "type": orjson.dumps(draft.type),
        }
        digest = chain_hash(self._prev_hash, event_body(parts))
        self.conn.execute(
            _INSERT_EVENT,
            (
                seq,
                event_id,
                draft.type,
                self.occurred_at,
                parts["actor"].decode(),
                parts["streams"].decode(),
                parts["payload"].decode(),
                parts["provenance"].decode(),
                parts["request"].decode(),
                self._idempotency_key,
                self._prev_hash,
                digest,
            ),
        )
        if streams:
            self.conn.executemany(_INSERT_STREAM, [(s, v, seq) for s, v in streams.items()])
            self._versions.update(streams)
        event = trusted(
            Event,
            {
                "seq": seq,
                "event_id": event_id,
                "type": draft.type,
                "occurred_at": self._occurred,
                "actor": self._actor,
                "streams": streams,
                "payload": draft.payload,
                "provenance": draft.provenance,
                "request": draft.request,
                "idempotency_key": self._idempotency_key,
                "prev_hash": self._prev_hash,
                "hash": digest,
            },
        )
        for projector in self._inline:
            projector.apply_event(self.conn, event)
        self.head_seq = seq
        self._prev_hash = digest
        self.events.append(event)
        return event


def new_event_id() -> str:
    """A random (version 4) UUID as 32 hex digits: ``uuid.uuid4().hex`` without building a
    ``UUID`` object, which costs more than the random bytes."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # RFC 4122 variant
    return raw.hex()


Decide = Callable[[Transaction], None]


class EventLog:
    """The log in one SQLite file. Safe to share between threads (one connection each)
    and between processes (SQLite's write lock serialises appends)."""

    def __init__(
        self,
        path: str | Path,
        *,
        inline: Sequence[InlineProjector] = (),
        create: bool = True,
        durability: Durability = "normal",
        busy_timeout: float = 60.0,
        readonly: bool = False,
    ) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if (readonly or not create) and not self.path.exists():
            raise FileNotFoundError(f"no writegate log at {self.path} (run `writegate init`)")
        self.inline = tuple(inline)
        self.durability = durability
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
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
                else:
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute(f"PRAGMA synchronous = {self.durability.upper()}")
            except sqlite3.DatabaseError as exc:  # "file is not a database", "unable to open…"
                raise EventLogError(f"{self.path}: {exc}") from exc
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _connect(self) -> sqlite3.Connection:
        """A connection. A read-only one never writes: ``mode=ro`` (SQLite may still create
        the WAL index beside an auditor's copy), else ``immutable`` where the directory is
        read-only too (read-only media, where no writer can exist either)."""

        def connect(target: str | Path, uri: bool = False) -> sqlite3.Connection:
            return sqlite3.connect(
                target,
                uri=uri,
                isolation_level=None,
                timeout=self.busy_timeout,
                check_same_thread=False,
            )

        if not self.readonly:
            return connect(self.path)
        uri = self.path.resolve().as_uri()
        try:
            conn = connect(f"{uri}?mode=ro", uri=True)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            if os.access(self.path.parent, os.W_OK):
                raise
            return connect(f"{uri}?immutable=1", uri=True)

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _install(self) -> None:
        conn = self.connection()
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:  # "file is not a database", and the like
            raise NotAnEventLog(f"{self.path}: {exc}") from exc
        if has_tables and app_id != APPLICATION_ID:
            raise NotAnEventLog(f"{self.path} is a SQLite file but not a writegate log")
        if version > FORMAT_VERSION:
            raise NotAnEventLog(
                f"{self.path} has log format {version}; this writegate reads up to {FORMAT_VERSION}"
            )
        if self.readonly:
            if version == 0:
                raise NotAnEventLog(f"{self.path} is not a writegate log (no log tables)")
            return  # read as it is: nothing installed, no read model caught up
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                # Only a new file is set up: re-creating objects on open would quietly
                # repair (and so hide) a dropped append-only trigger.
                run_script(conn, _SCHEMA.replace("{genesis}", GENESIS_HASH) + _APPEND_ONLY)
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
            for projector in self.inline:
                projector.install(conn)
                self._catch_up(conn, projector)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _catch_up(self, conn: sqlite3.Connection, projector: InlineProjector) -> None:
        """Bring a read model that is behind the log (new, or restored) up to the head."""
        done = projector.checkpoint(conn)
        last = done
        for event in self.iter_replayed(after_seq=done):
            projector.apply_event(conn, event)
            last = event.seq
        if last != done:
            projector.set_checkpoint(conn, last)

    # -- appending -------------------------------------------------------------------

    def append(
        self,
        actor: Actor,
        decide: Decide,
        *,
        idempotency_key: str | None = None,
        request: Any = None,
    ) -> AppendOutcome:
        """Run ``decide`` in a write transaction and commit what it emitted.

        If ``decide`` raises, nothing is written and the exception propagates. With an
        ``idempotency_key`` (scoped to ``actor.agent``) an earlier append under the same key
        is returned instead of running ``decide`` again; the same key with a different
        ``request`` raises ``IdempotencyKeyReused``.
        """
        if self.readonly:
            raise EventLogError(f"{self.path} is open read-only")
        conn = self.connection()
        request_hash = _request_hash(request)
        conn.execute("BEGIN IMMEDIATE")
        try:
            if idempotency_key is not None:
                # checked again under the write lock: a concurrent retry may have just committed
                earlier = self.replay(actor, idempotency_key, request_hash=request_hash)
                if earlier is not None:
                    conn.execute("ROLLBACK")
                    return AppendOutcome(earlier, replayed=True)
            tx = Transaction(conn, actor, idempotency_key, self.inline)
            decide(tx)
            if tx.events:
                last = tx.events[-1].seq
                for projector in self.inline:
                    projector.set_checkpoint(conn, last)
                if idempotency_key is not None:
                    conn.execute(
                        "INSERT INTO idempotency VALUES (?,?,?,?,?)",
                        (actor.agent, idempotency_key, request_hash, tx.events[0].seq, last),
                    )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return AppendOutcome(tx.events)

    def replay(
        self,
        actor: Actor,
        idempotency_key: str,
        request: Any = None,
        *,
        request_hash: str | None = None,
    ) -> list[Event] | None:
        """The events an earlier append under this key produced, or None if there was none.

        Callers may use it before ``append`` as a lock-free fast path for retries; ``append``
        runs it again inside its transaction. The same key with another request raises
        ``IdempotencyKeyReused``.
        """
        earlier = (
            self.connection()
            .execute(
                "SELECT request_hash, first_seq, last_seq FROM idempotency "
                "WHERE scope = ? AND key = ?",
                (actor.agent, idempotency_key),
            )
            .fetchone()
        )
        if earlier is None:
            return None
        if earlier[0] != (request_hash or _request_hash(request)):
            raise IdempotencyKeyReused(idempotency_key)
        return self._read_range(earlier[1], earlier[2])

    # -- reading ---------------------------------------------------------------------

    def head(self) -> tuple[int, str]:
        """(seq, hash) of the newest event; (0, genesis) for an empty log."""
        row = self.connection().execute(_HEAD).fetchone()
        return (row[0], row[1]) if row else (0, GENESIS_HASH)

    def stream_version(self, stream: str) -> int:
        return int(self.connection().execute(_STREAM_VERSION, (stream,)).fetchone()[0] or 0)

    def read(
        self,
        *,
        after_seq: int = 0,
        limit: int = 100,
        types: Sequence[str] | None = None,
        agent: str | None = None,
        stream: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        to_seq: int | None = None,
    ) -> EventPage:
        """One page of events in seq order, filtered; continue with ``next_after``."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        where = ["e.seq > :after"]
        params: dict[str, Any] = {"after": after_seq, "limit": limit + 1}
        source = "events e"
        if stream is not None:
            source = "event_streams s JOIN events e ON e.seq = s.seq"
            where.append("s.stream = :stream")
            params["stream"] = stream
        if agent is not None:
            where.append("json_extract(e.actor, '$.agent') = :agent")
            params["agent"] = agent
        if types:
            names = [f":t{i}" for i in range(len(types))]
            where.append(f"e.type IN ({', '.join(names)})")
            params.update({f"t{i}": t for i, t in enumerate(types)})
        if since is not None:
            params["after"] = max(after_seq, self._first_seq_from(since) - 1)
        if until is not None:
            to_seq = (
                min(to_seq, self.last_seq_at(until))
                if to_seq is not None
                else self.last_seq_at(until)
            )
        if to_seq is not None:
            where.append("e.seq <= :to_seq")
            params["to_seq"] = to_seq
        columns = ", ".join(f"e.{c.strip()}" for c in EVENT_COLUMNS.split(","))
        sql = (
            f"SELECT {columns} FROM {source} WHERE {' AND '.join(where)} "
            "ORDER BY e.seq LIMIT :limit"
        )
        rows = self.connection().execute(sql, params).fetchall()
        events = [row_to_event(r) for r in rows[:limit]]
        more = len(rows) > limit
        return EventPage(events, events[-1].seq if more else None)

    def iter_events(
        self,
        *,
        after_seq: int = 0,
        to_seq: int | None = None,
        batch: int = 1000,
        **filters: Any,
    ) -> Iterator[Event]:
        """Every event after ``after_seq`` (up to ``to_seq``) in order, read in pages;
        ``filters`` are those of ``read`` (types, agent, stream, since, until)."""
        cursor: int | None = after_seq
        while cursor is not None:
            page = self.read(after_seq=cursor, limit=batch, to_seq=to_seq, **filters)
            yield from page.events
            cursor = page.next_after

    def iter_replayed(
        self, *, after_seq: int = 0, to_seq: int | None = None, page: int = 256
    ) -> Iterator[EventCore]:
        """Every event after ``after_seq`` (up to ``to_seq``) in order, as projections read
        them. Each page is read whole before it is handed out, so the caller may write to
        this connection between events; small pages stay in cache."""
        conn = self.connection()
        last = self.head()[0] if to_seq is None else to_seq
        sql = f"SELECT {CORE_COLUMNS} FROM events WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?"
        while after_seq < last:
            rows = conn.execute(sql, (after_seq, last, page)).fetchall()
            if not rows:
                return
            for row in rows:
                yield trusted(EventCore, _core_values(row))
            after_seq = rows[-1][0]

    def _read_range(self, first: int, last: int) -> list[Event]:
        rows = (
            self.connection()
            .execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE seq BETWEEN ? AND ? ORDER BY seq",
                (first, last),
            )
            .fetchall()
        )
        return [row_to_event(r) for r in rows]

    def last_seq_at(self, moment: datetime) -> int:
        """The newest seq that occurred at or before ``moment`` (0 if none)."""
        return self._first_seq_from(moment, inclusive=False) - 1

    def _first_seq_from(self, moment: datetime, *, inclusive: bool = True) -> int:
        """The first seq at (or, not ``inclusive``, after) ``moment``; head + 1 if none.

        ``occurred_at`` never decreases along ``seq``, so a bisection over seq replaces a
        time index, which would cost every append another page write.
        """
        stamp = format_timestamp(moment)
        conn = self.connection()
        low, high = 1, self.head()[0] + 1
        while low < high:
            mid = (low + high) // 2
            at = conn.execute("SELECT occurred_at FROM events WHERE seq = ?", (mid,)).fetchone()[0]
            if at < stamp or (not inclusive and at == stamp):
                low = mid + 1
            else:
                high = mid
        return low

    # -- integrity -------------------------------------------------------------------

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
            conn.execute(_HEAD).fetchall()
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    def verify(self, *, batch: int = 5000) -> VerifyReport:
        """Recompute the whole hash chain; the report names the first bad seq, if any."""
        conn = self.connection()
        cursor = conn.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY seq")

        def rows() -> Iterator[tuple[Any, ...]]:
            while chunk := cursor.fetchmany(batch):
                yield from chunk

        return verify_rows(rows())

    def backup(self, dest: str | Path) -> tuple[int, str]:
        """Copy the whole file, as of one commit, to ``dest`` (a new file) while writers go
        on; returns the copy's head. SQLite's online backup in a single step reads one
        snapshot, page for page (rowids, triggers, read models, rejections: all as they
        were). The copy is left in rollback-journal mode, so it can be opened read-only
        without WAL files; opened for writing it returns to WAL."""
        target = Path(dest)
        if target.exists() and target.stat().st_size > 0:
            raise FileExistsError(f"{target} exists (a backup never overwrites)")
        copy = sqlite3.connect(target, isolation_level=None)
        try:
            self.connection().backup(copy, pages=-1)
            copy.execute("PRAGMA journal_mode = DELETE")
            row = copy.execute(_HEAD).fetchone()
        finally:
            copy.close()
        return (row[0], row[1]) if row else (0, GENESIS_HASH)

    def missing_triggers(self) -> list[str]:
        """Append-only triggers that should exist but do not (someone dropped them)."""
        present = {
            r[0]
            for r in self.connection().execute(
                "SELECT name FROM sqlite_master WHERE type='trigger'"
            )
        }
        return [t for t in APPEND_ONLY_TRIGGERS if t not in present]


def _request_hash(request: Any) -> str:
    return hashlib.sha256(canonical_json(request)).hexdigest()


@lru_cache(maxsize=1024)
def _actor(text: str) -> Actor:
    """Actors repeat (a handful of agents write most events) and are immutable: share them."""
    return trusted(Actor, orjson.loads(text))


@lru_cache(maxsize=256)
def _occurred(text: str) -> datetime:
    """A batch's events share one timestamp: parse it once and share the (immutable) value."""
    return parse_timestamp(text)


def _core_values(row: Sequence[Any]) -> dict[str, Any]:
    """The ``EventCore`` fields of a stored row (its first columns are ``CORE_COLUMNS``)."""
    loads = orjson.loads
    return {
        "seq": row[0],
        "event_id": row[1],
        "type": row[2],
        "occurred_at": _occurred(row[3]),
        "actor": _actor(row[4]),
        "streams": loads(row[5]),
        "payload": loads(row[6]),
        "provenance": loads(row[7]),
    }


def row_to_event(row: Sequence[Any]) -> Event:
    """Build an Event from a stored row (columns in ``EVENT_COLUMNS`` order)."""
    values = _core_values(row)
    values["request"] = orjson.loads(row[8])
    values["idempotency_key"], values["prev_hash"], values["hash"] = row[9], row[10], row[11]
    return trusted(Event, values)
