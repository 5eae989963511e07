"""Appending to a log, whatever the database: the write transaction and what commits with it.

The base of the log classes (``store.EventLog``, ``postgres.PostgresEventLog``): they say how
to take the write lock (``_begin_write``) and give a connection; everything else — the
idempotency check under the lock, ``decide``, the inline read models, the idempotency
record, commit or roll back — is the same for both.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from writegate.eventlog.canonical import chain_hash, stored_body
from writegate.eventlog.errors import EventLogError
from writegate.eventlog.events import Actor, Event
from writegate.eventlog.reading import LogReader
from writegate.eventlog.sql import Sql
from writegate.eventlog.tables import INSERT_EVENT, INSERT_IDEMPOTENCY, INSERT_STREAM
from writegate.eventlog.transaction import (
    AppendOutcome,
    Decide,
    InlineProjector,
    Transaction,
    request_hash,
    stored_columns,
)


class Appending(LogReader):
    """The appending half of the log contract, over the reading half."""

    inline: Sequence[InlineProjector]
    readonly: bool

    def _begin_write(self, conn: Sql) -> None:
        """Open a transaction holding the log's write lock."""
        raise NotImplementedError

    def _before_commit(self, conn: Sql, head: int) -> None:
        """Called in an append's transaction just before it commits with a new head."""

    def wait_for_append(self, timeout: float, stop: threading.Event | None = None) -> None:
        """Return when an append may have committed, after ``timeout`` seconds, or once
        ``stop`` is set: how a follower idles. Here it simply waits (a file cannot call);
        PostgreSQL wakes it on the commit's notification."""
        (stop or threading.Event()).wait(timeout)

    def describe(self) -> str:
        """Where the log is, for messages (a path, or a database without its password)."""
        raise NotImplementedError

    def _catch_up(self, conn: Sql, projector: InlineProjector) -> None:
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
            raise EventLogError(f"{self.describe()} is open read-only")
        conn = self.connection()
        digest = request_hash(request)
        self._begin_write(conn)
        try:
            if idempotency_key is not None:
                # checked again under the write lock: a concurrent retry may have just committed
                earlier = self.earlier_append(actor, idempotency_key, digest=digest)
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
                        INSERT_IDEMPOTENCY,
                        (actor.agent, idempotency_key, digest, tx.events[0].seq, last),
                    )
                self._before_commit(conn, last)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return AppendOutcome(tx.events)

    # -- integrity -------------------------------------------------------------------

    def append_existing(self, events: Iterable[Event]) -> tuple[int, str]:
        """Append events that already have their place in a chain — a copy of another log —
        exactly as they are, in one transaction: each must come next (its seq the head's
        plus one, its ``prev_hash`` the head's hash) and hash to its own ``hash``, so the copy's
        chain is the original's. Inline read models follow. Returns the new head."""
        if self.readonly:
            raise EventLogError(f"{self.describe()} is open read-only")
        conn = self.connection()
        self._begin_write(conn)
        try:
            seq, digest = self.head()
            for event in events:
                if event.seq != seq + 1 or event.prev_hash != digest:
                    raise EventLogError(
                        f"event {event.seq} does not follow the head {seq} of {self.describe()}"
                    )
                columns = stored_columns(event)
                if chain_hash(event.prev_hash, stored_body(**columns)) != event.hash:
                    raise EventLogError(f"event {event.seq} does not hash to its stored hash")
                conn.execute(INSERT_EVENT, (*columns.values(), event.hash))
                conn.executemany(
                    INSERT_STREAM, [(s, v, event.seq) for s, v in event.streams.items()]
                )
                for projector in self.inline:
                    projector.apply_event(conn, event)
                seq, digest = event.seq, event.hash
            for projector in self.inline:
                projector.set_checkpoint(conn, seq)
            self._before_commit(conn, seq)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return seq, digest
