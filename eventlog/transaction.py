"""One append: the write transaction handed to a caller's ``decide``.

``decide`` runs while the log's write lock is held, so what it reads through the
transaction (stream versions, a read model kept inline) cannot change before its events
commit. Each ``emit`` checks the expected versions, gives the event the next ``seq``,
chains its hash to the one before and updates the inline read models in place.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Protocol

import orjson

from writegate.eventlog.canonical import GENESIS_HASH, canonical_json, chain_hash, stored_body
from writegate.eventlog.errors import EventLogError, VersionConflict
from writegate.eventlog.events import (
    Actor,
    DraftEvent,
    Event,
    EventCore,
    format_timestamp,
    parse_timestamp,
    trusted,
)
from writegate.eventlog.pgheld import held
from writegate.eventlog.sealing import SealedRequest, Seals, forged
from writegate.eventlog.sql import Sql, inserted, sent
from writegate.eventlog.tables import HEAD, INSERT_EVENT, INSERT_STREAM, STREAM_VERSION


class InlineProjector(Protocol):
    """A read model kept in the log's own database, updated inside each append's transaction."""

    name: str
    tables: tuple[str, ...]  # what it keeps in the log's database (a role needs them all)

    # conn: the append's connection (``sql.Sql``; SQLite's, or the PostgreSQL adapter)
    def install(self, conn: Any) -> None: ...

    def installed(self, conn: Any) -> bool:
        """Whether its tables are there in the current layout, so opening needs no DDL (may
        raise the database's error when they are missing)."""
        ...

    def apply_event(self, conn: Any, event: EventCore) -> None: ...

    def set_checkpoint(self, conn: Any, seq: int) -> None: ...

    def checkpoint(self, conn: Any) -> int: ...


@dataclass(frozen=True)
class AppendOutcome:
    """What an append produced; ``replayed`` means an idempotency key matched an earlier append."""

    events: list[Event]
    replayed: bool = False


def new_event_id() -> str:
    """A random (version 4) UUID as 32 hex digits: ``uuid.uuid4().hex`` without building a
    ``UUID`` object, which costs more than the random bytes."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # RFC 4122 variant
    return raw.hex()


def request_hash(request: Any) -> str:
    """What an idempotency key is bound to: the digest of the request it first answered."""
    return hashlib.sha256(canonical_json(request)).hexdigest()


def bound(request: Any) -> Callable[[Sql], str]:
    """The digest an idempotency key is bound to, taken on the append's connection: a
    ``SealedRequest``'s with the keys the database holds then; any other request's is taken
    now, outside the lock, and only handed back."""
    if isinstance(request, SealedRequest):
        return request.digest
    digest = request_hash(request)
    return lambda _conn: digest


def stored_columns(event: Event) -> dict[str, Any]:
    """The columns an appended event is stored as (its hash aside), in ``INSERT_EVENT`` order:
    what ``emit`` writes, and what a copy of the event into another log writes again."""
    return {
        "seq": event.seq,
        "event_id": event.event_id,
        "type": event.type,
        "occurred_at": format_timestamp(event.occurred_at),
        "actor": canonical_json(event.actor.model_dump()).decode(),
        "streams": canonical_json(event.streams).decode(),
        "payload": canonical_json(event.payload).decode(),
        "provenance": canonical_json(event.provenance).decode(),
        "request": canonical_json(event.request).decode(),
        "idempotency_key": event.idempotency_key,
        "prev_hash": event.prev_hash,
    }


# Holds unless a stream of the JSON array of [stream, version] pairs, its one parameter, has
# another version, when it divides by zero: expectations the database checks as it runs the
# statement, with nothing to read back (``Known``), one statement however many there are.
EXPECT_VERSIONS = (
    "SELECT 1 / (CASE WHEN COUNT(*) = 0 THEN 1 ELSE 0 END) "
    "FROM json_array_elements(?::json) AS expected "
    "WHERE (expected ->> 1)::bigint <> (SELECT COALESCE(MAX(version), 0) FROM event_streams "
    "WHERE stream = expected ->> 0)"
)


class Expected:
    """Checks of stream versions held with an append's other writes (``pgheld``) and sent
    before them, in the same statement where they fit: they see the versions as they were
    before this transaction wrote any, and cost no statement of their own."""

    tables: ClassVar[tuple[str, ...]] = ()
    together: ClassVar[bool] = True
    first: ClassVar[bool] = True

    def __init__(self) -> None:
        self.pending: list[tuple[str, int]] = []

    def statements(self) -> list[tuple[str, list[tuple[Any, ...]]]]:
        return [(EXPECT_VERSIONS, [(orjson.dumps(self.pending).decode(),)])]


@dataclass
class Known:
    """What this process's last commit left: the head (seq, hash, ``occurred_at``) and
    stream versions as of it. An append may start from it instead of reading it (no round
    trip); the versions it serves are checked together (``EXPECT_VERSIONS``, one statement,
    sent before the transaction's first event or its end) and the event's insert is checked by
    the chain's trigger, so if another process appended since, the append fails
    in the database and is done again from what it reads."""

    head: tuple[int, str, str]
    versions: dict[str, int]

    def remember(self, tx: Transaction) -> None:
        if len(self.versions) > 100_000:
            self.versions.clear()
        self.versions.update(tx.versions_seen)
        if tx.events:
            last = tx.events[-1]
            self.head = (last.seq, last.hash, tx.occurred_at)


class Transaction:
    """The open write transaction handed to ``decide``: read versions, emit events."""

    def __init__(
        self,
        conn: Sql,
        actor: Actor,
        idempotency_key: str | None,
        inline: Sequence[InlineProjector],
        known: Known | None = None,
        after: tuple[tuple[int, str, str] | None, dict[str, int]] | None = None,
    ) -> None:
        """``known``: start from what the process's last commit left, checked in the
        database; ``after``: from the head and versions an earlier append of the same open
        transaction left (a commit group's member before), exact as read under the lock."""
        self.conn = conn
        self._inline = inline
        self._idempotency_key = idempotency_key
        self._actor = actor
        self._actor_text = canonical_json(actor.model_dump()).decode()
        self._known = known
        if known is not None:
            head: Any = known.head
        else:
            head = after[0] if after is not None else conn.execute(HEAD).fetchone()
        self._start: tuple[int, str, str] | None = (head[0], head[1], head[2]) if head else None
        self.head_seq: int = head[0] if head else 0
        self._prev_hash: str = head[1] if head else GENESIS_HASH
        now = format_timestamp(datetime.now(UTC))
        # occurred_at never runs backwards along the log, so time ranges are seq ranges.
        self.occurred_at: str = max(now, head[2]) if head else now
        self._occurred = parse_timestamp(self.occurred_at)
        self._versions: dict[str, int] = dict(after[1]) if after is not None else {}
        self._expecting: list[tuple[str, int]] = []  # served from ``known``, not yet checked
        self.events: list[Event] = []
        self._seals: Seals | None = None
        # what a writer that seals some values does to each draft before it is emitted
        self.sealing: Callable[[DraftEvent], DraftEvent] | None = None

    def subject(self, locator: str) -> str:
        """The id of the subject ``locator`` names (made on first use): what a stream of a
        personal identity is named by, so no stream name holds the clear value."""
        self._seals = self._seals or Seals(self.conn)
        return self._seals.subject(locator)[0]

    def seal(self, locator: str, value: Any) -> dict[str, str]:
        """``value``, personal to the subject ``locator``, as the sealed form a draft's payload,
        provenance or request holds in its place (``sealing``); the events emitted carry the
        clear value, so inline read models see it."""
        self._seals = self._seals or Seals(self.conn)
        return self._seals.seal(locator, value)

    @property
    def actor(self) -> Actor:
        """Who appends: every event of the transaction is theirs unless its draft names
        another (``DraftEvent.actor``)."""
        return self._actor

    def stream_version(self, stream: str) -> int:
        """The stream's version including anything emitted earlier in this transaction."""
        version = self._versions.get(stream)
        if version is None:
            if self._known is not None:  # as of the known head (new: none), checked later
                version = self._known.versions.get(stream, 0)
                self._expecting.append((stream, version))
            else:
                version = self.conn.execute(STREAM_VERSION, (stream,)).fetchone()[0] or 0
            self._versions[stream] = version
        return version

    def versions_later(self, streams: Sequence[str]) -> Callable[[], None]:
        """Ask now for the versions of ``streams`` not known yet, and take the answer when
        called: a writer that knows the streams it will touch reads them in the round trip
        of its other reads (a pipelined connection sends all before waiting). Nothing is
        asked when they are served from ``Known``: they are checked in the database, all
        in one statement."""
        wanted = self.unread_versions(streams)
        if not wanted:
            return lambda: None
        asked = [
            self.conn.execute(
                "SELECT stream, MAX(version) FROM event_streams "
                f"WHERE stream IN ({','.join('?' * len(chunk))}) GROUP BY stream",
                chunk,
            )
            for chunk in (wanted[i : i + 500] for i in range(0, len(wanted), 500))
        ]

        def take() -> None:
            found = {str(row[0]): int(row[1]) for cursor in asked for row in cursor.fetchall()}
            for stream in wanted:
                self._versions.setdefault(stream, found.get(stream, 0))

        return take

    def unread_versions(self, streams: Sequence[str]) -> list[str]:
        """The streams of ``streams`` whose versions this transaction would read: none when
        they are served from ``Known`` (checked in the database). A caller may read them
        with its own reads and say what it found (``read_versions``)."""
        wanted = [s for s in dict.fromkeys(streams) if s not in self._versions]
        if self._known is None:
            return wanted
        for stream in wanted:
            self.stream_version(stream)  # checked with the first event's (``expect``)
        return []

    def read_versions(self, found: Mapping[str, int]) -> None:
        """Versions of streams read under the lock by the caller (``unread_versions``)."""
        for stream, version in found.items():
            self._versions.setdefault(stream, version)

    def expect(self) -> None:
        """Send the checks of the versions served from ``Known`` so far, in one statement:
        before this transaction's streams change (``emit``), and before what was
        decided from them stands (a refusal, a commit). On PostgreSQL they are held, and go
        first in the statement of the writes held with them (``Expected``)."""
        pending, self._expecting = self._expecting, []
        if not pending:
            return
        if (expected := held(self.conn, Expected)) is not None:
            expected.pending.extend(pending)
        else:
            sent(self.conn, EXPECT_VERSIONS, (orjson.dumps(pending).decode(),))

    @property
    def head_left(self) -> tuple[int, str, str] | None:
        """The head (seq, hash, ``occurred_at``) as this transaction leaves it: where the
        next append of the same open transaction starts (``after``)."""
        if self.events:
            return (self.head_seq, self._prev_hash, self.occurred_at)
        return self._start

    @property
    def versions_seen(self) -> dict[str, int]:
        """Each stream's version as this transaction read it or left it."""
        return self._versions

    def emit(self, draft: DraftEvent) -> Event:
        if self.sealing is not None:
            draft = self.sealing(draft)
        for stream, expected in draft.expected_versions.items():
            current = self.stream_version(stream)
            if current != expected:
                raise VersionConflict(stream, expected, current)
        seq = self.head_seq + 1
        streams = {s: self.stream_version(s) + 1 for s in dict.fromkeys(draft.streams)}
        event_id = new_event_id()
        actor = draft.actor or self._actor
        columns: dict[str, Any] = {
            "seq": seq,
            "event_id": event_id,
            "type": draft.type,
            "occurred_at": self.occurred_at,
            "actor": self._actor_text
            if draft.actor is None
            else canonical_json(actor.model_dump()).decode(),
            "streams": canonical_json(streams).decode(),
            "payload": canonical_json(draft.payload).decode(),
            "provenance": canonical_json(draft.provenance).decode(),
            "request": canonical_json(draft.request).decode(),
            "idempotency_key": self._idempotency_key,
            "prev_hash": self._prev_hash,
        }
        for column in ("streams", "payload", "provenance", "request"):
            if forged(columns[column], self._seals):
                raise EventLogError(f"an event's {column} may not hold a '$sealed' of its own")
        digest = chain_hash(self._prev_hash, stored_body(**columns))
        self.expect()
        inserted(self.conn, INSERT_EVENT, [(*columns.values(), digest)])
        if streams:
            inserted(self.conn, INSERT_STREAM, [(s, v, seq) for s, v in streams.items()])
            self._versions.update(streams)
        payload, provenance, request = draft.payload, draft.provenance, draft.request
        if self._seals is not None:  # the events carry the clear values
            payload = self._seals.open_json(columns["payload"])
            provenance = self._seals.open_json(columns["provenance"])
            request = self._seals.open_json(columns["request"])
        event = trusted(
            Event,
            {
                "seq": seq,
                "event_id": event_id,
                "type": draft.type,
                "occurred_at": self._occurred,
                "actor": actor,
                "streams": streams,
                "payload": payload,
                "provenance": provenance,
                "request": request,
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


Decide = Callable[[Transaction], None]

__all__ = [
    "AppendOutcome",
    "Decide",
    "InlineProjector",
    "Known",
    "Transaction",
    "bound",
    "new_event_id",
    "request_hash",
]
