"""Reading the log back: the head, pages of events filtered, replays, earlier appends.

A mixin of ``EventLog``: every method reads through ``connection()``, so inside
``EventLog.snapshot()`` all of them see the log as of one commit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from writegate.eventlog.canonical import GENESIS_HASH
from writegate.eventlog.errors import IdempotencyKeyReused
from writegate.eventlog.events import Actor, Event, EventCore, format_timestamp
from writegate.eventlog.rows import row_to_core, row_to_event
from writegate.eventlog.sealing import SealAudit, SealBundle, export_seals, open_rows
from writegate.eventlog.sql import Sql
from writegate.eventlog.tables import (
    CORE_COLUMNS,
    EVENT_COLUMNS,
    FIND_IDEMPOTENCY,
    HEAD,
    STREAM_VERSION,
)
from writegate.eventlog.transaction import bound
from writegate.eventlog.verify import VerifyReport, index_problem, verify_rows

CORE_SEALED = (6, 7)  # the columns of a ``CORE_COLUMNS`` row that may hold sealed values
EVENT_SEALED = (6, 7, 8)  # and of an ``EVENT_COLUMNS`` row


@dataclass(frozen=True)
class EventPage:
    events: list[Event]
    next_after: int | None  # pass as ``after_seq`` for the next page; None when done


def cores_at(conn: Sql, seqs: Iterable[int]) -> dict[int, EventCore]:
    """The events of ``seqs`` that exist (without request and hashes), read on ``conn``: a
    write transaction reads what it must decide on in its own snapshot (``gate.authority``
    reads the provenance of the observations a write cites)."""
    wanted = sorted(set(seqs))
    if not wanted:
        return {}
    marks = ", ".join("?" * len(wanted))
    query = f"SELECT {CORE_COLUMNS} FROM events WHERE seq IN ({marks})"
    rows = conn.execute(query, wanted).fetchall()
    return {e.seq: e for e in map(row_to_core, open_rows(conn, rows, CORE_SEALED))}


def stream_seqs(conn: Sql, streams: Sequence[str]) -> list[int]:
    """The seqs of the events on any of ``streams``, in order, read on ``conn``."""
    if not streams:
        return []
    marks = ", ".join("?" * len(streams))
    query = f"SELECT DISTINCT seq FROM event_streams WHERE stream IN ({marks}) ORDER BY seq"
    return [int(row[0]) for row in conn.execute(query, list(streams))]


class LogReader:
    """The reading half of the log contract (see ``writegate.eventlog.contract``)."""

    AGENT = "json_extract(e.actor, '$.agent')"  # the actor's agent, in this database's SQL

    def connection(self) -> Sql:
        raise NotImplementedError

    def snapshot(self) -> AbstractContextManager[Sql]:
        """One read transaction on this thread's connection: everything read through this
        log inside it sees one commit, whatever writers append meanwhile."""
        raise NotImplementedError

    def has_table(self, name: str) -> bool:
        """Whether the log's database holds a table of that name (one created on demand)."""
        raise NotImplementedError

    def scanning(self) -> AbstractContextManager[None]:
        """Around a read of the whole log on this thread (``verify``'s checks): each page is
        read once, so a backend that keeps read pages in its process (SQLite) keeps few
        meanwhile. This backend keeps none."""
        return nullcontext()

    def verify(self, *, batch: int = 5000, to_seq: int | None = None) -> VerifyReport:
        """Recompute the whole hash chain (or its events up to ``to_seq``: what an answer
        read then relied on), as of one commit, in pages of ``batch`` (memory stays flat
        however long the log); the report names the first bad seq, if any."""
        sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?"
        last = (1 << 62) if to_seq is None else to_seq

        audit = SealAudit()

        def rows(conn: Sql) -> Iterator[Any]:
            after = 0
            while chunk := conn.execute(sql, (after, last, batch)).fetchall():
                audit.see(conn, chunk)
                yield from chunk
                after = chunk[-1][0]

        with self.snapshot() as conn:
            report = verify_rows(rows(conn))
            return report.with_seals(*audit.result()) if report.ok else report

    def verify_index(self, *, batch: int = 5000) -> str | None:
        """What the history index says that the events do not, as of one commit (None:
        nothing; ``verify.index_problem``)."""
        with self.snapshot() as conn:
            return index_problem(conn, batch)

    def export_seals(self) -> SealBundle:
        """The subjects and clear values the log holds (a copy takes them with its events)."""
        present = self.has_table("subject_keys")
        with self.snapshot() as conn:
            return export_seals(conn, present=present)

    def subject_of(self, locator: str) -> str | None:
        """The subject id ``locator`` has (None: never sealed, or forgotten): how a read that
        names a subject by its clear identity finds the pseudonym its streams carry."""
        if not self.has_table("subject_keys"):
            return None
        row = (
            self.connection()
            .execute("SELECT subject FROM subject_keys WHERE locator = ?", (locator,))
            .fetchone()
        )
        return str(row[0]) if row else None

    def head(self) -> tuple[int, str]:
        """(seq, hash) of the newest event; (0, genesis) for an empty log."""
        row = self.connection().execute(HEAD).fetchone()
        return (row[0], row[1]) if row else (0, GENESIS_HASH)

    def hash_at(self, seq: int) -> str | None:
        """The stored hash of event ``seq`` (None if the log is shorter): what anchors compare."""
        row = self.connection().execute("SELECT hash FROM events WHERE seq = ?", (seq,)).fetchone()
        return str(row[0]) if row else None

    def latest(self, stream: str) -> EventCore | None:
        """The newest event of a stream (the schema in force, say), or None: an index probe,
        whatever the length of the log."""
        row = (
            self.connection()
            .execute(
                f"SELECT {CORE_COLUMNS} FROM events WHERE seq = ("
                "SELECT seq FROM event_streams WHERE stream = ? ORDER BY version DESC LIMIT 1)",
                (stream,),
            )
            .fetchone()
        )
        if row is None:
            return None
        return row_to_core(open_rows(self.connection(), [row], CORE_SEALED)[0])

    def stream_version(self, stream: str) -> int:
        return int(self.connection().execute(STREAM_VERSION, (stream,)).fetchone()[0] or 0)

    def streams_starting(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` streams whose name starts with ``prefix``, in order: how an id
        typed in part (``proposal:4109``) is found. ``prefix`` is taken literally."""
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self.connection().execute(
            "SELECT DISTINCT stream FROM event_streams WHERE stream LIKE ? ESCAPE '\\' "
            "ORDER BY stream LIMIT ?",
            (pattern, limit),
        )
        return [str(row[0]) for row in rows]

    def earlier_append(
        self,
        actor: Actor,
        idempotency_key: str,
        request: Any = None,
        *,
        digest: Callable[[Sql], str] | None = None,
    ) -> list[Event] | None:
        """The events an earlier append under this key produced, or None if there was none.

        Callers may ask before ``append`` as a lock-free fast path for retries; ``append``
        asks again inside its transaction. The same key with another request (``digest``:
        what it is bound to, ``transaction.bound``) raises ``IdempotencyKeyReused``.
        """
        earlier = (
            self.connection().execute(FIND_IDEMPOTENCY, (actor.agent, idempotency_key)).fetchone()
        )
        if earlier is None:
            return None
        if earlier[0] != (digest or bound(request))(self.connection()):
            raise IdempotencyKeyReused(idempotency_key)
        return self.read_range(earlier[1], earlier[2])

    def read(
        self,
        *,
        after_seq: int = 0,
        limit: int = 100,
        types: Sequence[str] | None = None,
        agent: str | None = None,
        stream: str | Sequence[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        to_seq: int | None = None,
        sealed: bool = False,
    ) -> EventPage:
        """One page of events in seq order, filtered (``stream``: the events of one stream,
        or of any of several, each once); continue with ``next_after``. ``sealed``: as stored,
        personal values in their sealed form (what a copy carries)."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        where = ["e.seq > :after"]
        params: dict[str, Any] = {"after": after_seq, "limit": limit + 1}
        source = "events e"
        if isinstance(stream, str):
            source = "event_streams s JOIN events e ON e.seq = s.seq"
            where.append("s.stream = :stream")
            params["stream"] = stream
        elif stream is not None:  # an event on two of them is listed once
            names = [f":s{i}" for i in range(len(stream))] or ["NULL"]
            where.append(
                f"e.seq IN (SELECT seq FROM event_streams WHERE stream IN ({', '.join(names)}))"
            )
            params.update({f"s{i}": name for i, name in enumerate(stream)})
        if agent is not None:
            where.append(f"{self.AGENT} = :agent")
            params["agent"] = agent
        if types:
            names = [f":t{i}" for i in range(len(types))]
            where.append(f"e.type IN ({', '.join(names)})")
            params.update({f"t{i}": t for i, t in enumerate(types)})
        if since is not None:
            params["after"] = max(after_seq, self._first_seq_from(since) - 1)
        if until is not None:
            at = self.last_seq_at(until)
            to_seq = min(to_seq, at) if to_seq is not None else at
        if to_seq is not None:
            where.append("e.seq <= :to_seq")
            params["to_seq"] = to_seq
        columns = ", ".join(f"e.{c.strip()}" for c in EVENT_COLUMNS.split(","))
        sql = (
            f"SELECT {columns} FROM {source} WHERE {' AND '.join(where)} "
            "ORDER BY e.seq LIMIT :limit"
        )
        conn = self.connection()
        rows = conn.execute(sql, params).fetchall()
        page = rows[:limit] if sealed else open_rows(conn, rows[:limit], EVENT_SEALED)
        events = [row_to_event(r) for r in page]
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
            for row in open_rows(conn, rows, CORE_SEALED):
                yield row_to_core(row)
            after_seq = rows[-1][0]

    def read_seqs(self, seqs: Iterable[int]) -> dict[int, Event]:
        """The events of ``seqs`` (those that exist), in one statement: a query's answer
        cites the writes behind its triplets, scattered over the log."""
        wanted = sorted(set(seqs))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        conn = self.connection()
        rows = conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE seq IN ({marks})", wanted
        ).fetchall()
        return {e.seq: e for e in map(row_to_event, open_rows(conn, rows, EVENT_SEALED))}

    def read_range(self, first: int, last: int) -> list[Event]:
        """Events ``first`` to ``last``, inclusive."""
        conn = self.connection()
        rows = conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE seq BETWEEN ? AND ? ORDER BY seq",
            (first, last),
        ).fetchall()
        return [row_to_event(r) for r in open_rows(conn, rows, EVENT_SEALED)]

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
