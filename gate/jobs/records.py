"""What a job is: one long piece of operator work (a rebuild, a replay, a backup, a copy,
an import) on one target.

A job is an operational record, not an event: it says who asked for work on a
projection, how far it got and how it ended, none of which is a fact about the graph.
Putting it in the hash-chained log would make every progress step a permanent event and
a cancelled rebuild part of the history auditors verify; the ``jobs`` table
(``gate.jobs.table``) is beside the log instead, like the rejections.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict

from writegate.eventlog.events import parse_timestamp

Stored = Literal["running", "completed", "failed", "cancelled"]
Shown = Literal["running", "interrupted", "completed", "failed", "cancelled"]
HEARTBEAT_SECONDS = 5.0  # a running job's process says it is alive this often
STALE_AFTER = timedelta(seconds=60)  # silent this long (another host): its process died


class Job(BaseModel):
    """One row of the ``jobs`` table."""

    model_config = ConfigDict(frozen=True)

    id: int
    kind: str  # rebuild | replay | backup | copy | import
    target: str  # a projection's name, a destination, or the log: one running job on each
    options: str  # the kind's options, canonical JSON (``options_of``)
    owner: str  # the agent (or operator) who asked
    session: str | None
    transport: str
    requested_at: str
    state: Stored
    done: int  # work done so far: events, or a backup's pages, or an import's items
    total: int  # work to do, in the same units
    cancel_requested: bool
    host: str  # where the process running it is
    pid: int
    heartbeat_at: str
    ended_at: str | None
    outcome: str | None  # one line: what it did, or why it failed
    attempts: int  # 1, plus one per resumption

    def alive(self, now: datetime | None = None) -> bool:
        """Whether a process is still running it. On this host the process is asked
        directly, so a killed one is seen at once; elsewhere its heartbeat must be fresh."""
        if self.state != "running":
            return False
        if self.host == socket.gethostname():
            return _process_exists(self.pid)
        return (now or datetime.now(UTC)) - parse_timestamp(self.heartbeat_at) < STALE_AFTER

    def shown(self) -> Shown:
        """``interrupted``: running, but its process died; ``writegate jobs resume`` (or the
        next run of the same work) continues it from its checkpoint."""
        return "interrupted" if self.state == "running" and not self.alive() else self.state

    def options_of(self) -> dict[str, Any]:
        decoded: dict[str, Any] = orjson.loads(self.options)
        return decoded


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


class JobView(BaseModel):
    """A job as its owner or an admin sees it (over MCP and ``writegate jobs --format json``)."""

    model_config = ConfigDict(frozen=True)

    id: int
    kind: str
    target: str
    options: dict[str, Any]
    owner: str
    requested_at: str
    state: Shown
    done: int
    total: int
    cancel_requested: bool
    ended_at: str | None
    outcome: str | None
    attempts: int

    @classmethod
    def of(cls, job: Job) -> JobView:
        return cls(
            id=job.id,
            kind=job.kind,
            target=job.target,
            options=job.options_of(),
            owner=job.owner,
            requested_at=job.requested_at,
            state=job.shown(),
            done=job.done,
            total=job.total,
            cancel_requested=job.cancel_requested,
            ended_at=job.ended_at,
            outcome=job.outcome,
            attempts=job.attempts,
        )
