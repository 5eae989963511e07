"""The ``jobs`` table, in the log's own database (SQLite file or PostgreSQL), and its only
owner: every statement naming it is here.

One running job per target is the database's to enforce, not a check then an insert: a
partial unique index over the running rows makes a second claim fail on both backends,
whichever process or server makes it.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from writegate.eventlog import Actor, Log
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sql import create_once
from writegate.gate.jobs.records import Job, Stored

_TABLE = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    options TEXT NOT NULL,
    owner TEXT NOT NULL,
    session TEXT,
    transport TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    state TEXT NOT NULL,
    done INTEGER NOT NULL,
    total INTEGER NOT NULL,
    cancel_requested INTEGER NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    heartbeat_at TEXT NOT NULL,
    ended_at TEXT,
    outcome TEXT,
    attempts INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_one_running ON jobs (target) WHERE state = 'running';
CREATE INDEX IF NOT EXISTS jobs_owner ON jobs (owner, id);
"""
_COLUMNS = (
    "id, kind, target, options, owner, session, transport, requested_at, state, done, total, "
    "cancel_requested, host, pid, heartbeat_at, ended_at, outcome, attempts"
)


class TargetBusy(Exception):
    """Another job holds the target (running, or interrupted and waiting to be resumed)."""

    def __init__(self, job: Job) -> None:
        super().__init__(f"job {job.id} ({job.kind} {job.target}) is {job.shown()}")
        self.job = job


def _now() -> str:
    return format_timestamp(datetime.now(UTC))


class JobTable:
    def __init__(self, log: Log) -> None:
        self.log = log
        self._installed = False
        self._installing = threading.Lock()

    def install(self) -> None:
        """Create the table on the first job (opening a log writes nothing); a creation
        that loses a race with another process's stands down when the table is there."""
        with self._installing:
            if self._installed or self.log.readonly or self.log.has_table("jobs"):
                self._installed = True
                return
            create_once(self.log.connection(), _TABLE, lambda: self.log.has_table("jobs"))
            self._installed = True

    def _write(self, sql: str, params: tuple[Any, ...]) -> int:
        """One statement in its own write transaction; the rows it changed."""
        self.install()
        conn = self.log.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            changed = conn.execute(sql, params).rowcount
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return changed

    # -- claiming ------------------------------------------------------------------------

    def claim(self, kind: str, target: str, options: str, actor: Actor, total: int) -> Job:
        """A new running job on ``target`` for this process; ``TargetBusy`` if one holds it."""
        now = _now()
        try:
            self._write(
                f"INSERT INTO jobs ({_COLUMNS.removeprefix('id, ')}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 'running', 0, ?, 0, ?, ?, ?, NULL, NULL, 1)",
                (
                    kind,
                    target,
                    options,
                    actor.agent,
                    actor.session,
                    actor.transport,
                    now,
                    total,
                    socket.gethostname(),
                    os.getpid(),
                    now,
                ),
            )
        except Exception:  # the unique index (each driver has its own class for it)
            if (holder := self.holder(target)) is not None:
                raise TargetBusy(holder) from None
            raise
        found = self.holder(target)
        assert found is not None  # inserted just now, and only this process may end it
        return found

    def adopt(self, job: Job) -> Job | None:
        """Take over an interrupted job for this process (its heartbeat and pid as read, so
        two resumers cannot both win); None if someone else did first."""
        changed = self._write(
            "UPDATE jobs SET host = ?, pid = ?, heartbeat_at = ?, attempts = attempts + 1 "
            "WHERE id = ? AND state = 'running' AND host = ? AND pid = ? AND heartbeat_at = ?",
            (
                socket.gethostname(),
                os.getpid(),
                _now(),
                job.id,
                job.host,
                job.pid,
                job.heartbeat_at,
            ),
        )
        return self.get(job.id) if changed == 1 else None

    # -- while it runs -------------------------------------------------------------------

    def progress(self, job_id: int, done: int, total: int) -> bool:
        """Record how far it got; whether a cancellation was asked for meanwhile."""
        self._write(
            "UPDATE jobs SET done = ?, total = ?, heartbeat_at = ? WHERE id = ?",
            (done, total, _now(), job_id),
        )
        job = self.get(job_id)
        return job is not None and job.cancel_requested

    def heartbeat(self, job_id: int) -> None:
        self._write("UPDATE jobs SET heartbeat_at = ? WHERE id = ?", (_now(), job_id))

    def request_cancel(self, job_id: int) -> None:
        self._write(
            "UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND state = 'running'", (job_id,)
        )

    def finish(
        self, job_id: int, state: Stored, outcome: str, progress: tuple[int, int] | None = None
    ) -> None:
        """End it; ``progress``: (done, total) as last told (reports are spaced out)."""
        if progress is not None:
            self._write("UPDATE jobs SET done = ?, total = ? WHERE id = ?", (*progress, job_id))
        self._write(
            "UPDATE jobs SET state = ?, outcome = ?, ended_at = ? WHERE id = ?",
            (state, outcome[:2000], _now(), job_id),
        )

    # -- reading -------------------------------------------------------------------------

    def get(self, job_id: int) -> Job | None:
        return next(self._select("id = ?", (job_id,)), None)

    def holder(self, target: str) -> Job | None:
        """The running (or interrupted) job on ``target``, if any."""
        return next(self._select("target = ? AND state = 'running'", (target,)), None)

    def running(self) -> list[Job]:
        """Every running (or interrupted) job, oldest first."""
        return list(self._select("state = 'running'", (), "ORDER BY id"))

    def listed(self, *, owner: str | None = None, limit: int = 100) -> list[Job]:
        """Newest first; only ``owner``'s when given."""
        where, params = ("owner = ?", (owner,)) if owner is not None else ("1 = 1", ())
        return list(self._select(where, params, f"ORDER BY id DESC LIMIT {int(limit)}"))

    def counts(self) -> dict[str, int]:
        """Jobs by state as shown (interrupted apart from running), for /metrics."""
        if not self.log.has_table("jobs"):
            return {}
        found: dict[str, int] = {}
        for job in self._select("state = 'running'", ()):
            shown = job.shown()
            found[shown] = found.get(shown, 0) + 1
        for state, count in self.log.connection().execute(
            "SELECT state, count(*) FROM jobs WHERE state <> 'running' GROUP BY state"
        ):
            found[str(state)] = int(count)
        return found

    def _select(self, where: str, params: tuple[Any, ...], tail: str = "") -> Iterator[Job]:
        if not self._installed and not self.log.has_table("jobs"):
            return
        rows = self.log.connection().execute(
            f"SELECT {_COLUMNS} FROM jobs WHERE {where} {tail}", params
        )
        for row in rows.fetchall():
            yield Job(**dict(zip(_COLUMNS.split(", "), row, strict=True)))
