"""Group commit: appends that arrive together from several threads commit as one transaction.

Threads sharing one log would otherwise queue on the database's write lock (SQLite's busy
handler sleeps in growing steps, hence tails of ~100 ms under 20 writers) and pay a
``BEGIN``/``COMMIT``, the checkpoint row and the WAL frames of the same pages once each.
Here the first caller to find no group running leads: it takes every append queued so far,
runs them in one write transaction — each in its own savepoint, so one that is refused is
rolled back alone — commits once, and hands each caller its own outcome. Callers that
arrive meanwhile wait, and the first of them leads the next group. Nothing is acknowledged
before the commit that holds it: a crash loses only appends nobody was told succeeded.
A long append (a retraction's batch) is ``apart``: it commits in a group of its own, after
the appends queued before it, so a write waits for at most the one long append running
when it arrived, not also the next one its author queues the moment the first commits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from writegate.eventlog.events import Actor
from writegate.eventlog.sql import Sql
from writegate.eventlog.transaction import AppendOutcome, Decide


@dataclass(eq=False)
class Pending:
    """One caller's append, waiting for the group that carries it."""

    actor: Actor
    decide: Decide
    idempotency_key: str | None
    digest: Callable[[Sql], str]  # taken in the transaction (``transaction.bound``)
    apart: bool = False  # committed in a group of its own (a long append)
    outcome: AppendOutcome | None = None
    error: BaseException | None = None
    _ready: threading.Event | None = None  # made for a member that waits: most lead alone
    _leads: bool = False

    def settle(self, outcome: AppendOutcome | None, error: BaseException | None) -> None:
        self.outcome, self.error = outcome, error

    def result(self) -> AppendOutcome:
        if self.error is not None:
            raise self.error
        assert self.outcome is not None  # settled by the group's leader
        return self.outcome


class CommitGroups:
    """The queue of one log's appends and who leads the group now running."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[Pending] = []
        self._running = False
        self.groups = 0  # committed groups, and the appends they carried: how well it groups
        self.grouped = 0

    @property
    def waiting(self) -> int:
        """Appends queued for the next group."""
        with self._lock:
            return len(self._queue)

    def submit(self, pending: Pending, run: Callable[[list[Pending]], Any]) -> AppendOutcome:
        """Queue ``pending`` and return its outcome once its group has committed (or raise
        what refused it). ``run`` carries a group: it settles each member."""
        with self._lock:
            self._queue.append(pending)
            leads = not self._running
            self._running = True
            if not leads:  # made before the leader can take it from the queue
                pending._ready = threading.Event()
        if pending._ready is not None:
            pending._ready.wait()
            if not pending._leads:
                return pending.result()
        self._lead(run)
        return pending.result()

    def _lead(self, run: Callable[[list[Pending]], Any]) -> None:
        with self._lock:
            group, self._queue = _next_group(self._queue)
        try:
            run(group)
        except BaseException as exc:  # the group failed as a whole: its members with it
            for member in group:
                if member.outcome is None and member.error is None:
                    member.settle(None, exc)
            raise
        finally:
            with self._lock:
                self.groups += 1
                self.grouped += len(group)
                successor = self._queue[0] if self._queue else None
                self._running = successor is not None
            for member in group:
                if member._ready is not None:
                    member._ready.set()
            if successor is not None:  # the next group is led by the first who waits for it
                assert successor._ready is not None  # it queued while a group ran
                successor._leads = True
                successor._ready.set()


def _next_group(queue: list[Pending]) -> tuple[list[Pending], list[Pending]]:
    """The group to run now, and the rest queued: those before the first apart append, or
    that one alone if it comes first."""
    cut = next((n for n, member in enumerate(queue) if member.apart), len(queue))
    cut = cut or 1
    return queue[:cut], queue[cut:]
