"""What every log backend promises: the contract the gate, projections and audit rely on.

``EventLog`` (SQLite) fills it; a second backend fills the same protocol and passes the
same reusable test case (``writegate.eventlog.testing.LogContractTestCase``). Whatever
the backend: seqs are gapless and each hash chains to the one before; an append is all
or nothing; an idempotency key (scoped to the agent) returns its first append's events;
expected stream versions are checked under the write lock; reads see committed events in
seq order, and ``snapshot()`` holds one commit's view while writers go on; appends that
arrive together from several threads commit in one transaction, each kept or refused alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol, Self, TypeVar, runtime_checkable

from writegate.eventlog.errors import LogUnavailable
from writegate.eventlog.events import Actor, DraftEvent, Event, EventCore
from writegate.eventlog.expiring import ExpirePlan, Expiring, Finder
from writegate.eventlog.grouping import CommitGroups
from writegate.eventlog.reading import EventPage
from writegate.eventlog.sealing import ForgetPlan, SealBundle
from writegate.eventlog.sql import Sql
from writegate.eventlog.transaction import AppendOutcome, Transaction
from writegate.eventlog.verify import VerifyReport

Beside = Callable[[Sql, Sequence[str]], int]
"""A store beside the log that keeps values as text (the gate's refused requests), told in a
copied receipt's transaction (``erasing``) the texts that hold what it forgot — the seals of
those values, and the values in the clear (rows kept before the store sealed them) — to let
go of the rows holding any; returns how many it did."""

T = TypeVar("T")


class LogTransaction(Protocol):
    """The write transaction ``decide`` receives."""

    head_seq: int
    events: list[Event]

    def stream_version(self, stream: str) -> int: ...

    def emit(self, draft: DraftEvent) -> Event: ...

    def subject(self, locator: str) -> str: ...

    def seal(self, locator: str, value: Any) -> dict[str, str]: ...


@runtime_checkable
class Log(Protocol):
    readonly: bool
    inline: Sequence[Any]  # the read models kept in the log's database, in its transactions
    group_commit: bool  # appends arriving together from several threads commit together
    commit_groups: CommitGroups  # how many groups committed, carrying how many appends

    def describe(self) -> str:
        """Where the log is, for messages: a path, or an address without its password."""
        ...

    def connection(self) -> Sql:
        """This thread's connection to the log's database (the inline read models' too)."""
        ...

    def disconnect(self) -> None:
        """Let go of this thread's connection, for a thread that ends before the log closes
        (a job's): else each such thread's stays open until then."""
        ...

    def has_table(self, name: str) -> bool: ...

    def fault(self, exc: BaseException) -> LogUnavailable | None:
        """``exc`` as ``LogUnavailable`` if it is the database failing to write (a full disk)
        rather than a refusal: for those who write beside the log, as the rejections do."""
        ...

    # appending
    def append(
        self,
        actor: Actor,
        decide: Callable[[Any], None],
        *,
        idempotency_key: str | None = None,
        request: Any = None,
        apart: bool = False,
    ) -> AppendOutcome: ...

    def append_existing(
        self,
        events: Iterable[Event],
        *,
        seals: SealBundle | None = None,
        beside: Beside | None = None,
    ) -> tuple[int, str]: ...

    def export_seals(self) -> SealBundle: ...

    def subject_of(self, locator: str) -> str | None: ...

    def earlier_append(
        self,
        actor: Actor,
        idempotency_key: str,
        request: Any = None,
        *,
        digest: Callable[[Sql], str] | None = None,
    ) -> list[Event] | None: ...

    # reading
    def head(self) -> tuple[int, str]: ...

    def hash_at(self, seq: int) -> str | None: ...

    def latest(self, stream: str) -> EventCore | None: ...

    def stream_version(self, stream: str) -> int: ...

    def streams_starting(self, prefix: str, limit: int) -> list[str]: ...

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
    ) -> EventPage: ...

    def iter_events(
        self, *, after_seq: int = 0, to_seq: int | None = None, batch: int = 1000, **filters: Any
    ) -> Iterator[Event]: ...

    def iter_replayed(
        self, *, after_seq: int = 0, to_seq: int | None = None, page: int = 256
    ) -> Iterator[EventCore]: ...

    def read_range(self, first: int, last: int) -> list[Event]: ...

    def read_seqs(self, seqs: Iterable[int]) -> dict[int, Event]: ...

    def last_seq_at(self, moment: datetime) -> int: ...

    # integrity
    def snapshot(self) -> AbstractContextManager[Sql]: ...

    def scanning(self) -> AbstractContextManager[None]: ...

    def verify(self, *, batch: int = ..., to_seq: int | None = ...) -> VerifyReport: ...

    def verify_index(self, *, batch: int = ...) -> str | None: ...

    def forget_plan(self, locators: Sequence[str]) -> ForgetPlan: ...

    def forget(
        self,
        actor: Actor,
        locators: Sequence[str],
        *,
        reason: str,
        also: Callable[[Transaction, ForgetPlan], dict[str, int]] | None = None,
    ) -> tuple[ForgetPlan, Event | None]:
        """Destroy those subjects' sealed values and keys; append the receipt (``sealing``)."""
        ...

    def expire(
        self,
        actor: Actor,
        find: Finder,
        *,
        policy: dict[str, str],
        also: Expiring | None = None,
    ) -> tuple[ExpirePlan, Event | None]:
        """Delete the sealed values ``find`` names; append the receipt (``expiring``)."""
        ...

    def maintain(self, work: Callable[[Sql], T]) -> T:
        """``work`` in a write transaction that appends nothing (a read model's upkeep)."""
        ...

    def missing_triggers(self) -> list[str]: ...

    def wait_for_append(self, timeout: float, stop: threading.Event | None = None) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...
