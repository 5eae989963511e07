"""The tail a writer is about to extend, checked before it appends anything.

A log is worth appending to only if its chain verifies at its head. On SQLite a ``-wal``
of another log copied beside the file is replayed into what the file reads as (the other
history's newest pages over this one's): a write would extend that chain, and the
checkpoint when its connection closes would merge the stranger into the file for good.
``writegate verify`` checks the whole chain; a writer checks what it extends, once per
process, so the cost is constant in the log's length: the newest ``TAIL_EVENTS`` events'
hashes, and the links (seq and ``prev_hash``) back past as many bytes of events as the
``-wal`` holds — every commit it can have added, and where a stranger's history meets this
one's — plus the link to the event before them. A 4 MB ``-wal`` (a busy server's) costs a
few tens of milliseconds. A stranger's ``-wal`` whose frames hold only its read model's
newest pages leaves this chain whole but the read model ahead of it: that is refused too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from writegate.eventlog.canonical import GENESIS_HASH
from writegate.eventlog.errors import ChainBroken, EventLogError, one_line
from writegate.eventlog.sql import Sql
from writegate.eventlog.tables import EVENT_COLUMNS, file_format
from writegate.eventlog.transaction import InlineProjector
from writegate.eventlog.verify import hash_matches

TAIL_EVENTS = 8
_NEWEST = f"SELECT {EVENT_COLUMNS} FROM events WHERE seq <= ? ORDER BY seq DESC LIMIT ?"
_HASH_AT = "SELECT hash FROM events WHERE seq = ?"


def check_tail(
    conn: Sql, where: str, *, back_bytes: int = 0, seen: tuple[int, str] | None = None
) -> tuple[int, str]:
    """The head, once the newest events verify (see the module); ``seen`` is a head this
    process found verified before, which must still be there as it was. Raises
    ``ChainBroken`` naming the earliest break found."""
    if seen is not None and seen[0] > 0:
        found = conn.execute(_HASH_AT, (seen[0],)).fetchone()
        if found is None or found[0] != seen[1]:
            gone = "the event this process found at the head has gone or changed since"
            raise ChainBroken(where, seen[0], gone)
    head: tuple[int, str] | None = None
    newer: Sequence[Any] | None = None  # the row read just before (one seq later)
    broken: tuple[int, str] | None = None
    checked = covered = 0
    upto, batch = 2**62, TAIL_EVENTS + 2  # enough when nothing lies past the newest few
    while True:
        rows = conn.execute(_NEWEST, (upto, batch)).fetchall()
        for row in rows:
            head = head or (row[0], row[11])
            if (problem := _problem(row, newer, rehash=checked <= TAIL_EVENTS)) is not None:
                broken = problem
            if checked > TAIL_EVENTS and covered > back_bytes:
                return _verdict(where, head, broken)
            checked += 1
            covered += sum(len(value) for value in row if isinstance(value, str))
            newer = row
        if len(rows) < batch:
            break
        upto, batch = rows[-1][0] - 1, min(batch * 8, 4096)
    if newer is not None and (newer[0] != 1 or newer[10] != GENESIS_HASH):
        broken = (newer[0], "it is the oldest event stored, but not the first of a chain")
    return _verdict(where, head or (0, GENESIS_HASH), broken)


def _problem(
    row: Sequence[Any], newer: Sequence[Any] | None, *, rehash: bool
) -> tuple[int, str] | None:
    """What is wrong with ``row`` itself (if ``rehash``) or its link to the event after it,
    if anything (the lower seq first, as ``verify`` reads)."""
    if rehash and not hash_matches(row):
        return row[0], "stored hash does not match the event's content (the event was altered)"
    if newer is not None:
        if row[0] != newer[0] - 1:
            return row[0] + 1, f"seq {row[0] + 1} is missing (next stored seq is {newer[0]})"
        if newer[10] != row[11]:
            return newer[0], "prev_hash does not match the hash of the event before it"
    return None


def _no_read_model_ahead(
    conn: Sql, where: str, head: int, inline: Sequence[InlineProjector]
) -> None:
    """Refuse a file whose read models (kept in it, each with the seq it has applied) are
    past its head: a stranger's ``-wal`` may hold only a read model's newest pages, leaving
    this log's chain whole and its read model another's."""
    for projector in inline:
        try:
            applied = projector.checkpoint(conn)
        except sqlite3.OperationalError:  # not installed in this file yet
            continue
        if applied > head:
            raise EventLogError(
                f"{where}: the read model has applied seq {applied}, past the log's head "
                f"{head}: a -wal of another log beside this file? nothing was written "
                "(`writegate verify` checks the whole file)"
            )


def _verdict(where: str, head: tuple[int, str], broken: tuple[int, str] | None) -> tuple[int, str]:
    if broken is not None:
        raise ChainBroken(where, *broken)
    return head


def tail_before_writing(
    path: Path, busy_timeout: float, inline: Sequence[InlineProjector] = ()
) -> tuple[int, str] | None:
    """A SQLite log's head, once its tail verifies, read before anything can write to it or
    checkpoint a stray ``-wal`` into it: on a read-only connection of its own (which never
    checkpoints), so a refusal leaves the file and the ``-wal`` as they were. Back past the
    ``-wal``'s size. None: not a log yet."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    wal = Path(f"{path}-wal")
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro",
            uri=True,
            isolation_level=None,
            timeout=busy_timeout,
        )
    except sqlite3.DatabaseError as exc:  # a folder, a file this user may not read
        raise EventLogError(f"{path}: {one_line(exc)}") from exc
    try:
        if file_format(conn, path) == 0:
            return None
        conn.execute("BEGIN")  # one snapshot for the whole walk
        back = wal.stat().st_size if wal.exists() else 0
        head = check_tail(conn, str(path), back_bytes=back)
        _no_read_model_ahead(conn, str(path), head[0], inline)
        return head
    except sqlite3.DatabaseError as exc:  # "database disk image is malformed"
        raise EventLogError(
            f"{path}: its newest events cannot be read ({one_line(exc)}); nothing was "
            "written (`writegate verify` checks the whole chain)"
        ) from exc
    finally:
        conn.close()
