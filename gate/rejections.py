"""Rejected attempts, kept for auditors: which agent keeps hallucinating labels.

A rejection is not part of the graph's history, so it is not an event: it goes to its own
table (``rejections``), in its own small transaction after the refused write rolled back.
The table is bounded by count (``retention``, env ``WRITEGATE_REJECTION_RETENTION``; 0 keeps
none) and optionally by age (``max_age``, env ``WRITEGATE_REJECTION_MAX_AGE_DAYS``,
``[rejections] max_age_days``: a refused request may hold personal data), pruned together
in a process's first write and then every tenth of the count cap (at most every thousand).

A refusal is the gate's answer whether or not the table can be written now. While another
process holds the SQLite file's write lock, its record waits in memory (at most
``MAX_WAITING``, each with the time it was refused) for a thread of its own to write it once
the lock frees: audits miss nothing, and neither the agent nor a stdio server's event loop
waits out the busy timeout for a line of audit. What still waits when the gate closes is
named in one warning line.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from writegate.eventlog import Actor, Log, canonical_json
from writegate.eventlog.erasing import let_go
from writegate.eventlog.errors import one_line
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sealing import MARK, sealed_subjects
from writegate.eventlog.sql import Sql, create_once, has_column
from writegate.eventlog.store import EventLog, WouldWait
from writegate.gate.refusal_seals import Seal, opened, sealed
from writegate.gate.rejection_records import Refused, Rejection, kept_of, max_age_of

_log = logging.getLogger(__name__)
RETENTION_ENV = "WRITEGATE_REJECTION_RETENTION"
MAX_AGE_ENV = "WRITEGATE_REJECTION_MAX_AGE_DAYS"
DEFAULT_RETENTION = 100_000
MAX_REQUEST_BYTES = 65_536
MAX_WAITING = 10_000  # refusals kept in memory while the write lock is held elsewhere
PAUSES = (0.01, 0.5)  # seconds between tries for the lock: the first, doubled up to the last
NAMED = 10  # refusals a line about unrecorded ones names; the rest are counted
HELD = "another process held the write lock until this one stopped"
CROWDED = f"more than {MAX_WAITING} waited for the lock"

_TABLE = """
CREATE TABLE IF NOT EXISTS rejections (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    agent TEXT NOT NULL,
    session TEXT,
    transport TEXT NOT NULL,
    operation TEXT NOT NULL,
    error_code TEXT NOT NULL,
    message TEXT NOT NULL,
    request TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rejections_at ON rejections (at);
CREATE TABLE IF NOT EXISTS rejection_details (
    id INTEGER PRIMARY KEY,
    details TEXT NOT NULL
);
"""
# rejection_details: a refusal's typed details (the tool result's ``details``), by the
# rejection's id; a table of its own so logs whose rejections table came before it keep it
# as it is (a server role that cannot create it records refusals without their details)


class RejectionLog:
    def __init__(
        self, log: Log, retention: int | None = None, max_age: timedelta | None = None
    ) -> None:
        self.log = log
        kept = kept_of(os.environ.get(RETENTION_ENV), RETENTION_ENV, DEFAULT_RETENTION)
        self.retention = retention if retention is not None else kept
        days = os.environ.get(MAX_AGE_ENV)
        self.max_age = max_age if max_age is not None else max_age_of(days, MAX_AGE_ENV)
        self._since_prune = -1  # the first write prunes: a process may write few
        self._installed = False  # created on the first refusal: opening a log writes nothing
        self._details = False  # whether rejection_details is there (known once installed)
        self._installing = threading.Lock()
        self._waiting: deque[Refused] = deque()  # refused while the lock was held elsewhere
        self._turned_away = 0  # refused while ``_waiting`` was full: counted, not kept
        self._changed = threading.Condition()  # guards the two above and the recorder
        self._recorder: threading.Thread | None = None
        self._closing = threading.Event()

    def install(self) -> None:
        """Create the tables now (``init`` does), so a server's role needs no CREATE right.
        Refusals arriving together create it once: PostgreSQL's ``IF NOT EXISTS`` is no guard
        against two transactions creating it at once, so a creation that loses such a race
        stands down when the table is there."""
        with self._installing:
            if self._installed or self.log.readonly or self._tables():
                self._installed = True
                return
            create_once(self.log.connection(), _TABLE, lambda: self.log.has_table("rejections"))
            self._details = self.log.has_table("rejection_details")
            self._installed = True

    def _tables(self) -> bool:
        """Whether both tables are there (remembered: details are recorded if they are)."""
        self._details = self.log.has_table("rejection_details")
        return self._details and self.log.has_table("rejections")

    def record(
        self,
        actor: Actor,
        operation: str,
        error_code: str,
        message: str,
        request: Any,
        details: dict[str, Any] | None = None,
        seal: Seal | None = None,
    ) -> None:
        """Record a refusal now, or, while another process holds the write lock, once it
        frees (``drained``); never waits for the lock. Raises the log's fault (a full disk).
        ``seal``: the request names personal values, sealed as it is recorded."""
        if self.retention <= 0:
            return
        try:
            text = canonical_json(request).decode()
        except TypeError as exc:  # too deep or not JSON: what was refused, not its bytes
            text = canonical_json({"unrecorded": f"not representable as JSON: {exc}"}).decode()
            seal = None
        refused = Refused(
            format_timestamp(datetime.now(UTC)),
            actor,
            operation,
            error_code,
            message,
            text if seal else text[:MAX_REQUEST_BYTES],  # sealed whole, then cut
            canonical_json(details).decode() if details else None,
            seal,
        )
        with self._changed:
            if self._waiting:  # behind those already waiting: recorded in the order refused
                self._wait_for_lock(refused)
                return
        try:
            with self._without_waiting():
                self._write([refused])
        except WouldWait:
            with self._changed:
                self._wait_for_lock(refused)

    def drained(self, timeout: float) -> bool:
        """Whether every refusal kept waiting for the lock is recorded, within ``timeout``."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._waiting, timeout)

    def close(self) -> None:
        """Stop the recorder, try once more (without waiting) to record what waits, and name
        in one warning line what still could not be."""
        self._closing.set()
        with self._changed:
            self._changed.notify_all()
            recorder = self._recorder
        if recorder is not None:
            recorder.join()
        with self._changed:
            left, turned_away = list(self._waiting), self._turned_away
            self._waiting.clear()
            self._turned_away = 0
        if left:
            self._write_or_say(left, HELD)
        if turned_away:
            self._unrecorded(turned_away, CROWDED, [])

    def _without_waiting(self) -> AbstractContextManager[None]:
        """Only a SQLite file's lock is waited for; PostgreSQL's appends serialize on an
        advisory lock that inserting a rejection does not take."""
        if isinstance(self.log, EventLog):
            return self.log.without_waiting()
        return nullcontext()

    def _wait_for_lock(self, refused: Refused) -> None:
        """(Holding ``_changed``.) Keep ``refused`` for the recorder, started if need be."""
        if len(self._waiting) >= MAX_WAITING:
            if not self._turned_away:
                _log.warning(
                    "%s: %d refusals wait for the write lock to be recorded; more are counted, "
                    "not kept, until it frees",
                    self.log.describe(),
                    MAX_WAITING,
                )
            self._turned_away += 1
            return
        self._waiting.append(refused)
        if self._recorder is None and not self._closing.is_set():
            self._recorder = threading.Thread(
                target=self._record_waiting, name="writegate-rejections", daemon=True
            )
            self._recorder.start()
        self._changed.notify_all()

    def _record_waiting(self) -> None:
        """The recorder: whatever waits, in one transaction, as soon as the lock is free;
        tried again and again (never waiting in SQLite, so closing stops it at once)."""
        pause = PAUSES[0]
        while not self._closing.is_set():
            with self._changed:
                self._changed.wait_for(lambda: self._waiting or self._closing.is_set())
                batch = list(self._waiting)
            if not batch:
                continue
            try:
                with self._without_waiting():
                    self._write(batch)
            except WouldWait:
                self._closing.wait(pause)
                pause = min(pause * 2, PAUSES[1])
                continue
            except Exception as exc:  # a full disk: said, not kept for ever
                fault = self.log.fault(exc)
                self._unrecorded(len(batch), fault.cause if fault else one_line(exc), batch)
            with self._changed:
                for _ in batch:
                    self._waiting.popleft()
                if self._turned_away:
                    self._unrecorded(self._turned_away, CROWDED, [])
                    self._turned_away = 0
                self._changed.notify_all()
            pause = PAUSES[0]

    def _write_or_say(self, refusals: Sequence[Refused], busy: str) -> None:
        try:
            with self._without_waiting():
                self._write(refusals)
        except WouldWait:
            self._unrecorded(len(refusals), busy, refusals)
        except Exception as exc:
            fault = self.log.fault(exc)
            self._unrecorded(len(refusals), fault.cause if fault else one_line(exc), refusals)

    def _unrecorded(self, count: int, why: str | None, named: Sequence[Refused]) -> None:
        names = "; ".join(r.said() for r in named[:NAMED])
        more = f"; and {count - NAMED} more" if count > NAMED else ""
        _log.warning(
            "%s: %d refusal%s not recorded in the rejections table (%s)%s",
            self.log.describe(),
            count,
            "" if count == 1 else "s",
            why,
            f": {names}{more}" if names else "",
        )

    def _write(self, refusals: Sequence[Refused]) -> None:
        """Insert ``refusals`` in one transaction (creating the tables first if need be)."""
        if not self._installed:
            self.install()
        conn = self.log.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            for refused in refusals:
                self._insert(conn, refused)
            first = self._since_prune < 0
            self._since_prune = max(self._since_prune, 0) + len(refusals)
            if first or self._since_prune >= max(1, min(1000, self.retention // 10)):
                self._since_prune = 0
                self._prune(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # a full disk's failed COMMIT ended it already
                conn.execute("ROLLBACK")
            raise

    def _prune(self, conn: Sql) -> None:
        """Drop the rows past the count cap, and those older than ``max_age``."""
        tables = ("rejection_details", "rejections") if self._details else ("rejections",)
        for table in tables:
            conn.execute(
                f"DELETE FROM {table} WHERE id <= (SELECT max(id) FROM rejections) - ?",
                (self.retention,),
            )
        if self.max_age is None:
            return
        cutoff = format_timestamp(datetime.now(UTC) - self.max_age)
        if self._details:
            conn.execute(
                "DELETE FROM rejection_details WHERE id IN "
                "(SELECT id FROM rejections WHERE at < ?)",
                (cutoff,),
            )
        conn.execute("DELETE FROM rejections WHERE at < ?", (cutoff,))

    def _insert(self, conn: Sql, refused: Refused) -> None:
        actor = refused.actor
        who = (actor.agent, actor.session, actor.transport)
        kept = {"message": refused.message, "request": refused.request, "details": refused.details}
        if refused.seal is not None:
            kept = sealed(conn, refused.seal, kept)
        message, request, details = str(kept["message"]), str(kept["request"]), kept["details"]
        what = (refused.operation, refused.error_code, message, request[:MAX_REQUEST_BYTES])
        conn.execute(
            "INSERT INTO rejections (at, agent, session, transport, operation, error_code, "
            "message, request) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (refused.at, *who, *what),
        )
        if details and self._details:  # the row just inserted, found by what it holds
            conn.execute(  # (older SQLite cannot return the id it gave)
                "INSERT INTO rejection_details (id, details) SELECT max(id), ? FROM "
                "rejections WHERE at = ? AND agent = ? AND message = ?",
                (details, refused.at, actor.agent, message),
            )

    def read(
        self,
        *,
        agent: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Iterator[Rejection]:
        if not self.log.has_table("rejections"):  # none recorded yet
            return
        asked = [
            ("agent = ?", agent),
            ("at >= ?", format_timestamp(since) if since else None),
            ("at <= ?", format_timestamp(until) if until else None),
        ]
        where = ["1 = 1", *(clause for clause, value in asked if value is not None)]
        params = [value for _, value in asked if value is not None]
        details = "(SELECT details FROM rejection_details d WHERE d.id = rejections.id)"
        details = details if self.log.has_table("rejection_details") else "NULL"
        conn = self.log.connection()
        rows = conn.execute(
            "SELECT id, at, agent, session, transport, operation, error_code, message, "
            f"request, {details} FROM rejections WHERE {' AND '.join(where)} ORDER BY id",
            params,
        ).fetchall()  # (opening a sealed one reads the connection again)
        for row in rows:
            found = dict(zip(Rejection.model_fields, row, strict=True))
            yield Rejection.model_validate(opened(conn, found))

    def keep(
        self, kept: Sequence[Rejection], seal: Callable[[Rejection], Seal | None] | None = None
    ) -> None:
        """Record refusals another log kept (a migration's) as they were, under new ids;
        ``seal``: how each one's personal values are sealed here (None: kept in the clear)."""
        self._write([replace(Refused.kept(r), seal=seal(r) if seal else None) for r in kept])

    def count(self) -> int:
        if not self.log.has_table("rejections"):
            return 0
        return int(self.log.connection().execute("SELECT count(*) FROM rejections").fetchone()[0])


def forget_rejections(conn: Sql, needles: Sequence[str]) -> int:
    """Delete the refusals whose request, message or details hold one of ``needles`` (a
    forgotten subject's seals, or its values as JSON text), in the caller's transaction,
    and the subjects only they held (made as they were sealed: ``refusal_seals``): how many."""
    if not needles or not has_column(conn, "rejections", "request"):
        return 0
    details = has_column(conn, "rejection_details", "details")
    likes = ["%" + re.sub(r"([\\%_])", r"\\\1", needle) + "%" for needle in needles]
    found = conn.execute(*_holding(likes, details)).fetchall()
    ids = [(int(row[0]),) for row in found]
    for table in ("rejections", "rejection_details"):
        if has_column(conn, table, "id"):
            conn.executemany(f"DELETE FROM {table} WHERE id = ?", ids)
    named = {
        subject for row in found for text in row[1:] for subject in sealed_subjects(text or "")
    }

    def elsewhere(subject: str) -> bool:  # a refusal still holding a value of it
        return conn.execute(*_holding([f"%{MARK}{subject}.%"], details)).fetchone() is not None

    let_go(conn, named, elsewhere)
    return len(ids)


def _holding(likes: Sequence[str], details: bool) -> tuple[str, list[str]]:
    """The query for the refusals (id and texts) whose request, message or (``details``: the
    table is there) details are LIKE one of ``likes``, and its parameters."""
    columns = ("r.request", "r.message", "d.details") if details else ("r.request", "r.message")
    like = " OR ".join(f"{column} LIKE ? ESCAPE '\\'" for column in columns)
    joined = " LEFT JOIN rejection_details d ON d.id = r.id" if details else ""
    where = " OR ".join(f"({like})" for _ in likes)
    query = f"SELECT r.id, {', '.join(columns)} FROM rejections r{joined} WHERE {where}"
    return query, [x for x in likes for _ in columns]


__all__ = [
    "DEFAULT_RETENTION",
    "MAX_AGE_ENV",
    "MAX_REQUEST_BYTES",
    "RETENTION_ENV",
    "Rejection",
    "RejectionLog",
    "forget_rejections",
    "max_age_of",
]
