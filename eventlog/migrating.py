"""Migrating a log into the sealing format: its events written again into a new log.

A log written before a label was declared personal holds that label's values in the clear,
in hashed bodies: sealing them changes every hash from the first such event on. So the log
is not edited but written again beside itself, event by event, each keeping its seq, id,
time, actor and idempotency key, its body re-encoded by the caller (``Reseal``: personal
values sealed, identities made pseudonyms) and chained anew. Last comes a ``log.migrated``
receipt naming the old log, its head (seq and hash) and a digest of the old chain's hashes,
which the new log keeps (``migrated_hashes``, seq -> the old hash): an anchor taken before
the migration is proven by its hash there, the table by the receipt's digest, the receipt by
the new chain. The old log is refused if it fails ``verify``, so every old hash kept was
checked. Nothing is migrated into a log that holds events. The idempotency records of the
events migrated come too (their seqs are kept), so a retry the old log would have answered
with its first append's events is answered so by the new one.
"""

from __future__ import annotations

import hashlib
import sqlite3
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice

from pydantic import BaseModel, ConfigDict

from writegate.eventlog.canonical import GENESIS_HASH, chain_hash, stored_body
from writegate.eventlog.contract import Log
from writegate.eventlog.errors import EventLogError
from writegate.eventlog.events import Actor, DraftEvent, Event
from writegate.eventlog.sealing import SealBundle, Seals, import_seals
from writegate.eventlog.sql import Sql, has_column, run_script
from writegate.eventlog.tables import INSERT_IDEMPOTENCY
from writegate.eventlog.transaction import Transaction, stored_columns

RESEALED = "resealed"  # a carried record's digest of a request the migration sealed
MIGRATED = "log.migrated"  # the receipt's event type
STREAM = "log:migrated"
TABLE = "migrated_hashes"
DDL = """
CREATE TABLE IF NOT EXISTS migrated_hashes (
    seq BIGINT PRIMARY KEY,
    hash TEXT NOT NULL
);
"""

# an old event as stored -> its body re-encoded (chain fields as they were), sealing with
# the ``Seals`` of the migration (the old log's subjects and any it makes)
Reseal = Callable[[Event, Seals], Event]


class LogMigrated(BaseModel):
    """The receipt: the log this one continues, its head, and what was re-encoded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    from_log: str
    from_head_seq: int
    from_head_hash: str
    hashes: str  # sha256 of the old hashes, each followed by a newline, in seq order
    resealed: int  # the events whose body the migration changed


@dataclass(frozen=True)
class Migrated:
    """What a migration made: the new log's head and its receipt."""

    head_seq: int
    head_hash: str
    receipt: LogMigrated
    idempotency: int = 0  # the idempotency records carried


def migrate_log(
    source: Log,
    dest: Log,
    actor: Actor,
    reseal: Reseal,
    *,
    batch: int = 1000,
    progress: Callable[[int, int], None] | None = None,
) -> Migrated:
    """Write ``source`` again into the empty ``dest`` as ``reseal`` re-encodes each event,
    then the ``log.migrated`` receipt; refused if ``source`` fails ``verify``."""
    head = source.head()  # first: what verify checks next reaches at least this far
    report = source.verify()
    if not report.ok:
        raise EventLogError(
            f"{source.describe()} fails verify ({report.describe()}): a log must verify "
            "before it is migrated"
        )
    if dest.head()[0]:
        raise EventLogError(f"{dest.describe()} holds events: migrate into an empty log")
    scratch = sqlite3.connect(":memory:", isolation_level=None)  # the migration's seals
    import_seals(scratch, source.export_seals())
    seals = Seals(scratch)
    old_hashes = hashlib.sha256()
    resealed: list[int] = []  # the seqs whose body the migration changed
    prev = GENESIS_HASH
    events = source.iter_events(to_seq=head[0], batch=batch, sealed=True)
    sent: set[str] = set()
    while chunk := list(islice(events, batch)):
        again: list[Event] = []
        for event in chunk:
            old_hashes.update(f"{event.hash}\n".encode())
            made = reseal(event, seals)
            if stored_columns(made) != stored_columns(event):
                resealed.append(event.seq)
            again.append(_chained(made, prev))
            prev = again[-1].hash
        seals.opened.clear()  # what a transaction would read back: not needed here
        dest.append_existing(again, seals=_new_seals(scratch, sent))
        dest.append(actor, _keeping([(e.seq, e.hash) for e in chunk]))  # appends no event
        if progress is not None:
            progress(again[-1].seq, head[0])
    records = _idempotency(source, head[0], resealed)
    for start in range(0, len(records), batch):
        part = records[start : start + batch]
        dest.append(actor, _recording(part))  # appends no event
    receipt = LogMigrated(
        from_log=source.describe(),
        from_head_seq=head[0],
        from_head_hash=head[1],
        hashes=old_hashes.hexdigest(),
        resealed=len(resealed),
    )

    dest.append(actor, lambda tx: tx.emit(DraftEvent(MIGRATED, receipt.model_dump(), (STREAM,))))
    seq, digest = dest.head()
    return Migrated(seq, digest, receipt, len(records))


def _idempotency(
    source: Log, upto: int, resealed: list[int]
) -> list[tuple[str, str, str, int, int]]:
    """The idempotency records of ``source``'s events up to ``upto``. A record of events the
    migration sealed keeps its key spent but not its digest: a plain digest of a request that
    held personal values would let them be guessed once forgotten. A retry under such a key
    is refused as the key reused, never written twice."""
    with source.snapshot() as conn:
        rows = conn.execute(
            "SELECT scope, key, request_hash, first_seq, last_seq FROM idempotency "
            "WHERE last_seq <= ? ORDER BY first_seq",
            (upto,),
        ).fetchall()
    records = [(str(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4])) for r in rows]
    return [
        (r[0], r[1], RESEALED, r[3], r[4]) if _holds(resealed, r[3], r[4]) else r for r in records
    ]


def _holds(seqs: list[int], first: int, last: int) -> bool:
    """Whether the ascending ``seqs`` hold one from ``first`` to ``last``."""
    at = bisect_left(seqs, first)
    return at < len(seqs) and seqs[at] <= last


def _keeping(kept: list[tuple[int, str]]) -> Callable[[Transaction], None]:
    """An append's ``decide`` keeping old hashes (seq, hash) and emitting nothing."""

    def decide(tx: Transaction) -> None:
        install(tx.conn)
        tx.conn.executemany("INSERT INTO migrated_hashes (seq, hash) VALUES (?, ?)", kept)

    return decide


def _recording(records: list[tuple[str, str, str, int, int]]) -> Callable[[Transaction], None]:
    """An append's ``decide`` adding idempotency records and emitting nothing."""

    def decide(tx: Transaction) -> None:
        tx.conn.executemany(INSERT_IDEMPOTENCY, records)

    return decide


def _chained(event: Event, prev: str) -> Event:
    """``event`` placed after ``prev`` in the new chain: its ``prev_hash`` and ``hash``."""
    placed = event.model_copy(update={"prev_hash": prev})
    digest = chain_hash(prev, stored_body(**stored_columns(placed)))
    return placed.model_copy(update={"hash": digest})


def _new_seals(scratch: Sql, sent: set[str]) -> SealBundle:
    """The subjects not sent yet and every value sealed since the last batch (then let go)."""
    keys = [
        (str(r[0]), str(r[1]), str(r[2]))
        for r in scratch.execute("SELECT subject, locator, key FROM subject_keys")
        if str(r[0]) not in sent
    ]
    sent.update(k[0] for k in keys)
    values = [
        (str(r[0]), str(r[1]), str(r[2]))
        for r in scratch.execute("SELECT subject, digest, value FROM sealed_values")
    ]
    scratch.execute("DELETE FROM sealed_values")
    return SealBundle(keys, values)


def install(conn: Sql) -> None:
    """The table of old hashes (inside the caller's write transaction)."""
    if not has_column(conn, TABLE, "hash"):
        run_script(conn, DDL)


def receipt_of(log: Log) -> tuple[int, LogMigrated] | None:
    """The migration receipt of ``log`` and its seq (None: the log was never migrated)."""
    event = log.latest(STREAM)
    return None if event is None else (event.seq, LogMigrated.model_validate(event.payload))


def old_hash(log: Log, seq: int) -> str | None:
    """The hash event ``seq`` had in the log ``log`` was migrated from, as its receipt
    commits to (None: no migration, no such event, or the kept hashes are not the ones the
    receipt names — edited)."""
    found = receipt_of(log)
    if found is None or seq > found[1].from_head_seq or not log.has_table(TABLE):
        return None
    with log.snapshot() as conn:
        digest = hashlib.sha256()
        chosen: str | None = None
        for kept_seq, kept in _kept(conn):
            digest.update(f"{kept}\n".encode())
            if kept_seq == seq:
                chosen = kept
    return chosen if digest.hexdigest() == found[1].hashes else None


def _kept(conn: Sql) -> Iterator[tuple[int, str]]:
    after = 0
    while rows := conn.execute(
        "SELECT seq, hash FROM migrated_hashes WHERE seq > ? ORDER BY seq LIMIT 5000", (after,)
    ).fetchall():
        yield from ((int(r[0]), str(r[1])) for r in rows)
        after = int(rows[-1][0])


__all__ = [
    "MIGRATED",
    "LogMigrated",
    "Migrated",
    "Reseal",
    "migrate_log",
    "old_hash",
    "receipt_of",
]
