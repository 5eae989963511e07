"""Rejected attempts, kept for auditors: which agent keeps hallucinating labels.

A rejection is not part of the graph's history, so it is not an event: it goes to its own
table in the log's file (``rejections``), in its own small transaction after the refused
write rolled back. The table is bounded: past ``retention`` rows the oldest are dropped
(env ``WRITEGATE_REJECTION_RETENTION``; 0 keeps none).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from writegate.eventlog import Actor, Log, canonical_json
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sql import run_script

RETENTION_ENV = "WRITEGATE_REJECTION_RETENTION"
DEFAULT_RETENTION = 100_000
MAX_REQUEST_BYTES = 65_536

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


@dataclass(frozen=True)
class Rejection:
    id: int
    at: str
    agent: str
    session: str | None
    transport: str
    operation: str
    error_code: str
    message: str
    request: str  # canonical JSON, cut at 64 KiB
    details: str | None = None  # canonical JSON of the refusal's details (None: unrecorded)


class RejectionLog:
    def __init__(self, log: Log, retention: int | None = None) -> None:
        self.log = log
        env = os.environ.get(RETENTION_ENV)
        self.retention = retention if retention is not None else int(env or DEFAULT_RETENTION)
        self._since_prune = 0
        self._installed = False  # created on the first refusal: opening a log writes nothing
        self._details = False  # whether rejection_details is there (known once installed)
        self._installing = threading.Lock()

    def install(self) -> None:
        """Create the tables now (``init`` does), so a server's role needs no CREATE right.
        Refusals arriving together create it once: PostgreSQL's ``IF NOT EXISTS`` is no guard
        against two transactions creating it at once, so a creation that loses such a race
        stands down when the table is there."""
        with self._installing:
            if self._installed or self.log.readonly or self._tables():
                self._installed = True
                return
            conn = self.log.connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                run_script(conn, _TABLE)
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:  # a full disk's failed COMMIT ended it already
                    conn.execute("ROLLBACK")
                if not isinstance(exc, Exception) or not self.log.has_table("rejections"):
                    raise  # (else another process made it meanwhile)
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
    ) -> None:
        if self.retention <= 0:
            return
        try:
            text = canonical_json(request).decode()
        except TypeError as exc:  # too deep or not JSON: what was refused, not its bytes
            text = canonical_json({"unrecorded": f"not representable as JSON: {exc}"}).decode()
        if not self._installed:
            self.install()
        conn = self.log.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            at = format_timestamp(datetime.now(UTC))
            conn.execute(
                "INSERT INTO rejections (at, agent, session, transport, operation, error_code, "
                "message, request) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    at,
                    actor.agent,
                    actor.session,
                    actor.transport,
                    operation,
                    error_code,
                    message,
                    text[:MAX_REQUEST_BYTES],
                ),
            )
            if details and self._details:  # the row just inserted, found by what it holds
                conn.execute(  # (older SQLite cannot return the id it gave)
                    "INSERT INTO rejection_details (id, details) SELECT max(id), ? FROM "
                    "rejections WHERE at = ? AND agent = ? AND message = ?",
                    (canonical_json(details).decode(), at, actor.agent, message),
                )
            self._since_prune += 1
            if self._since_prune >= max(1, min(1000, self.retention // 10)):
                self._since_prune = 0
                for table in (
                    ("rejections", "rejection_details") if self._details else ("rejections",)
                ):
                    conn.execute(
                        f"DELETE FROM {table} WHERE id <= (SELECT max(id) FROM rejections) - ?",
                        (self.retention,),
                    )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # a full disk's failed COMMIT ended it already
                conn.execute("ROLLBACK")
            raise

    def read(
        self,
        *,
        agent: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Iterator[Rejection]:
        if not self.log.has_table("rejections"):  # none recorded yet
            return
        where, params = ["1 = 1"], []
        if agent is not None:
            where.append("agent = ?")
            params.append(agent)
        if since is not None:
            where.append("at >= ?")
            params.append(format_timestamp(since))
        if until is not None:
            where.append("at <= ?")
            params.append(format_timestamp(until))
        details = (
            "(SELECT details FROM rejection_details d WHERE d.id = rejections.id)"
            if self.log.has_table("rejection_details")
            else "NULL"
        )
        rows = self.log.connection().execute(
            "SELECT id, at, agent, session, transport, operation, error_code, message, "
            f"request, {details} FROM rejections WHERE {' AND '.join(where)} ORDER BY id",
            params,
        )
        for row in rows:
            yield Rejection(*row)

    def count(self) -> int:
        if not self.log.has_table("rejections"):
            return 0
        return int(self.log.connection().execute("SELECT count(*) FROM rejections").fetchone()[0])
