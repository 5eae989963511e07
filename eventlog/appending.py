"""Appending to a log, whatever the database: the write transaction and what commits with it.

The base of the log classes (``store.EventLog``, ``postgres.PostgresEventLog``): they say how
to take the write lock (``_begin_write``) and give a connection; everything else — the
idempotency check under the lock, ``decide``, the inline read models, the idempotency
record, commit or roll back — is the same for both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from writegate.eventlog.contract import Beside
from writegate.eventlog.erasing import forgetting
from writegate.eventlog.errors import EventLogError, LogUnavailable
from writegate.eventlog.events import Actor, Event, EventCore, format_timestamp
from writegate.eventlog.existing import append_existing
from writegate.eventlog.expiring import ExpirePlan, Expiring, Finder, expiring
from writegate.eventlog.grouping import CommitGroups, Pending
from writegate.eventlog.reading import LogReader
from writegate.eventlog.sealing import TABLES, ForgetPlan, SealBundle, plan_forget
from writegate.eventlog.sql import Sql, sent
from writegate.eventlog.tables import INSERT_IDEMPOTENCY
from writegate.eventlog.tail import check_tail
from writegate.eventlog.transaction import (
    AppendOutcome,
    Decide,
    InlineProjector,
    Known,
    Transaction,
    bound,
)

Head = tuple[int, str, str]  # seq, hash, occurred_at
T = TypeVar("T")


class _Unconfirmed(Exception):
    """An append from what its process knew that cannot tell whether its key was used."""


class _Careful(Exception):
    """A commit group tried without a savepoint a member that needed them (rolled back)."""


KNOWN_MISS_WAIT = 8  # after an append found what its process knew stale, appends that read


class Appending(LogReader):
    """The appending half of the log contract, over the reading half."""

    inline: Sequence[InlineProjector]
    readonly: bool
    group_commit = True  # concurrent appends commit together (``grouping``); off: one each
    commit_groups: CommitGroups  # set by each backend
    _tail_seen: tuple[int, str] | None = None  # a head this process found verified (``tail``)
    _tail_checked = False  # before this process's first append, the tail it extends
    starts_from_known = False  # a lone append may start from what the last commit left
    lean_groups = False  # a group's members without savepoints first (``_commit_read``)
    _known: Known | None = None  # that (``transaction.Known``), while it is worth trying
    _misses_to_wait = 0  # appends that read first before it is tried again, after a miss

    def _begin_write(self, conn: Sql) -> None:
        """Open a transaction holding the log's write lock; if the lock is not had, raise
        (``LogBusy`` where the database can say so): the caller rolls back what is open."""
        raise NotImplementedError

    def _begin_append(self, conn: Sql) -> None:
        """``_begin_write`` for an append's group; a backend may send it without waiting."""
        self._begin_write(conn)

    def _await_sent(self, conn: Sql) -> None:
        """Wait for what an append has sent but not yet waited for (errors raised here):
        between the members of a group, so that each one's failure is its own."""

    def _from_database(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the database's error (not ``decide``'s own refusal)."""
        return False

    def fault(self, exc: BaseException) -> LogUnavailable | None:
        """``exc`` as ``LogUnavailable`` if it is the database failing to write (a full disk)
        rather than the append being refused: the caller may retry once there is room."""
        return None

    def _check_tail_once(self, conn: Sql) -> None:
        """Before this process first appends, in its write transaction: the chain verifies
        where it is extended, and the head found on opening (if any) is still there
        (``tail.check_tail``; ``ChainBroken`` if not, and nothing is written)."""
        if not self._tail_checked:
            self._tail_seen = check_tail(conn, self.describe(), seen=self._tail_seen)
            self._tail_checked = True

    def _before_commit(self, conn: Sql, head: int) -> None:
        """Called in an append's transaction just before it commits with a new head."""

    def _commit(self, conn: Sql, head: int | None) -> None:
        """Commit, the inline read models' checkpoints moved to ``head`` (None: nothing new)."""
        if head is not None:
            for projector in self.inline:
                projector.set_checkpoint(conn, head)
            self._before_commit(conn, head)
        conn.execute("COMMIT")

    def _abandon(self, conn: Sql, exc: BaseException) -> None:
        """Roll back what is open; ``exc`` raised as ``LogUnavailable`` if the database
        failed to write (the caller raises anything else itself)."""
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if (fault := self.fault(exc)) is not None:
            raise fault from exc

    def _alone(self) -> bool:
        """Whether this thread's appends commit alone, never grouped: one that may not wait
        (``store.EventLog.without_waiting``) must neither queue behind a group nor lead one."""
        return False

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
        apart: bool = False,
    ) -> AppendOutcome:
        """Run ``decide`` in a write transaction and commit what it emitted.

        If ``decide`` raises, nothing it emitted is written and the exception propagates.
        With an ``idempotency_key`` (scoped to ``actor.agent``) an earlier append under the
        same key is returned instead of running ``decide`` again; the same key with a
        different ``request`` raises ``IdempotencyKeyReused``. Appends from several threads
        at once commit together (``grouping``); ``decide`` may then run on another thread,
        with the transaction it is handed; ``apart`` (a long append) in a group of its own.
        """
        if self.readonly:
            raise EventLogError(f"{self.describe()} is open read-only")
        pending = Pending(actor, decide, idempotency_key, bound(request), apart)
        if not self.group_commit or self._alone():
            self._commit_group([pending])
            return pending.result()
        return self.commit_groups.submit(pending, self._commit_group)

    def _commit_group(self, group: list[Pending]) -> None:
        """One write transaction for ``group``; settles each member. A lone append starts
        from what this process knows (``_from_known``) where the backend allows it."""
        if self._known is not None and len(group) == 1:
            if self._misses_to_wait > 0:
                self._misses_to_wait -= 1  # other processes append too: it seldom holds
            elif self._from_known(group[0]):
                return
            else:
                self._misses_to_wait = KNOWN_MISS_WAIT
        self._commit_read(group)

    def _from_known(self, member: Pending) -> bool:
        """``member`` appended from the head and stream versions this process's last commit
        left (``transaction.Known``), with nothing read to start: on PostgreSQL, if
        ``decide`` reads nothing more, the whole append is one round trip. Returns False,
        with nothing written or settled, if the database found them stale (another process
        appended since, or the idempotency key was used): the caller appends from what it
        reads. A refusal by ``decide`` stands once what it was given is confirmed. Under an
        idempotency key, only an append that emits is tried here (a used key fails its
        record's insert): a refusal or nothing to emit may be a retry of an append that
        landed, which the caller's read of the key answers."""
        known, key = self._known, member.idempotency_key
        assert known is not None
        conn = self.connection()
        try:
            self._begin_append(conn)
            tx = Transaction(conn, member.actor, key, self.inline, known)
            try:
                member.decide(tx)
            except Exception as refusal:
                if self._from_database(refusal):
                    raise  # perhaps what it was told is stale
                if key is not None:
                    raise _Unconfirmed from refusal  # perhaps a retry: its key is read
                tx.expect()
                self._await_sent(conn)  # what decide was told holds: the refusal stands
                conn.execute("ROLLBACK")
                member.settle(None, refusal)
                return True
            if key is not None and not tx.events:
                raise _Unconfirmed  # nothing to fail on the key's record: read it
            if tx.events and key is not None:  # a key used before fails on its primary key
                first, last = tx.events[0].seq, tx.events[-1].seq
                row = (member.actor.agent, key, member.digest(conn), first, last)
                sent(conn, INSERT_IDEMPOTENCY, row)
            tx.expect()
            self._commit(conn, tx.events[-1].seq if tx.events else None)
        except BaseException as exc:
            self._abandon(conn, exc)
            if not isinstance(exc, Exception) or isinstance(exc, EventLogError):
                raise
            self._known = None  # stale: the next append reads, and knows again once committed
            return False
        known.remember(tx)
        member.settle(AppendOutcome(tx.events), None)
        return True

    def _commit_read(self, group: list[Pending]) -> None:
        """One write transaction for ``group``, from the head and versions read under the
        lock; settles each. A backend whose members' writes wait to be sent (``lean_groups``)
        first tries it without a savepoint a member; if a member's writes were sent before
        it was refused, or the database refused any (rare: the gate checked them), the
        whole group is done again the careful way, each member in its own savepoint."""
        if self.lean_groups and len(group) > 1:
            try:
                self._commit_members(group, careful=False)
                return
            except _Careful:
                pass  # rolled back, none settled: again, with a savepoint a member
        self._commit_members(group, careful=True)

    def _commit_members(self, group: list[Pending], *, careful: bool) -> None:
        conn = self.connection()
        try:
            self._begin_append(conn)  # inside: a lock not had is rolled back below
            self._check_tail_once(conn)
            events: list[Event] = []
            seen: dict[str, int] = {}  # stream versions as the group leaves them
            left: list[Head | None] = []  # the head as the group leaves it, once read
            saving = careful and len(group) > 1  # one alone, refused, rolls back it all
            for member in group:
                mark = None if careful else self._lean_mark(conn)
                if saving:
                    conn.execute("SAVEPOINT append")
                try:
                    outcome, tx = self._append_one(conn, member, (left[0], seen) if left else None)
                    if careful and len(group) > 1:
                        self._await_sent(conn)
                    if tx is not None:  # what it leaves, now that nothing of it failed
                        seen.update(tx.versions_seen if len(seen) < 100_000 else {})
                        left[:] = [tx.head_left]
                except Exception as exc:
                    if (fault := self.fault(exc)) is not None:  # the group cannot commit
                        raise fault from exc
                    if not careful and (
                        self._from_database(exc) or not self._lean_undo(conn, mark)
                    ):
                        raise _Careful from exc
                    if careful and not saving:
                        conn.execute("ROLLBACK")
                        member.settle(None, exc)
                        return
                    if careful:
                        conn.execute("ROLLBACK TO append")
                        conn.execute("RELEASE append")
                    member.settle(None, exc)
                    continue
                if saving:
                    conn.execute("RELEASE append")
                member.settle(outcome, None)
                if not outcome.replayed:
                    events.extend(outcome.events)
            self._commit(conn, events[-1].seq if events else None)
        except BaseException as exc:
            self._known = None
            for member in group:  # nothing of the group is written: none is acknowledged
                member.settle(None, None)
            self._abandon(conn, exc)
            if not careful and isinstance(exc, Exception) and self._from_database(exc):
                raise _Careful from exc  # a member's write the database refused, at the end
            raise
        if self.starts_from_known and events:
            newest = events[-1]
            head = (newest.seq, newest.hash, format_timestamp(newest.occurred_at))
            self._known = Known(head, seen)

    def _lean_mark(self, conn: Sql) -> Any:
        """Before a member of a lean group: what it is undone to (``_lean_undo``)."""
        raise NotImplementedError

    def _lean_undo(self, conn: Sql, mark: Any) -> bool:
        """Undo a refused member of a lean group if nothing it wrote was sent since ``mark``
        (its held writes dropped); False if something was: its savepoint was needed."""
        raise NotImplementedError

    def _append_one(
        self, conn: Sql, member: Pending, after: tuple[Head | None, dict[str, int]] | None
    ) -> tuple[AppendOutcome, Transaction | None]:
        """One member of a group, inside its savepoint: the idempotency check (which sees the
        group's earlier members), ``decide``, the idempotency record; from the head and
        versions the members before left (``after``; None: read them)."""
        key, actor = member.idempotency_key, member.actor
        if key is not None:
            earlier = self.earlier_append(actor, key, digest=member.digest)
            if earlier is not None:
                return AppendOutcome(earlier, replayed=True), None
        tx = Transaction(conn, actor, key, self.inline, after=after)
        member.decide(tx)
        if tx.events and key is not None:
            sent(
                conn,
                INSERT_IDEMPOTENCY,
                (actor.agent, key, member.digest(conn), tx.events[0].seq, tx.events[-1].seq),
            )
        return AppendOutcome(tx.events), tx

    # -- forgetting ------------------------------------------------------------------

    def forget_plan(self, locators: Sequence[str]) -> ForgetPlan:
        """What ``forget`` of these subjects would destroy, as of now (a dry run)."""
        present = self.has_table(TABLES[0])
        with self.snapshot() as conn:
            return plan_forget(conn, locators, present=present)

    def forget(
        self,
        actor: Actor,
        locators: Sequence[str],
        *,
        reason: str,
        also: Callable[[Transaction, ForgetPlan], dict[str, int]] | None = None,
    ) -> tuple[ForgetPlan, Event | None]:
        """Destroy the keys and clear values of the subjects ``locators`` name and append the
        ``subject.forgotten`` receipt, in one write transaction; ``also`` forgets them in the
        caller's own stores in that transaction and returns its counts per store, which the
        receipt adds to the log's. Then the bytes are made to leave the database's files
        (``_after_forget``). Subjects that never sealed a value are nothing to forget: then
        nothing is appended."""
        done: list[tuple[ForgetPlan, Event | None]] = []
        self.append(actor, forgetting(locators, reason, also, self._forgetting, done))
        if done[-1][1] is not None:
            self._after_forget()
        return done[-1]

    def expire(
        self, actor: Actor, find: Finder, *, policy: dict[str, str], also: Expiring | None = None
    ) -> tuple[ExpirePlan, Event | None]:
        """Delete the sealed values ``find`` names, append the receipt (``expiring``)."""
        done: list[tuple[ExpirePlan, Event | None]] = []
        self.append(actor, expiring(find, policy, also, self._forgetting, done))
        if done[-1][1] is not None:
            self._after_forget()
        return done[-1]

    def _forgetting(self, conn: Sql) -> None:
        """Set up ``conn`` so that what a forgetting deletes is overwritten, not only freed."""

    def _after_forget(self) -> None:
        """After a forgetting committed: what the database needs so that the deleted bytes
        leave its files (SQLite: a checkpoint that truncates the WAL)."""

    def maintain(self, work: Callable[[Sql], T]) -> T:
        """``work`` on the log's connection in a write transaction that appends nothing — a
        read model's upkeep no event asks for (merging the text index): it takes the write
        lock as an append does, so an append waits for it; committed if ``work`` returns."""
        if self.readonly:
            raise EventLogError(f"{self.describe()} is open read-only")
        conn = self.connection()
        self._begin_write(conn)
        try:
            done = work(conn)
            conn.execute("COMMIT")
        except BaseException as exc:
            self._abandon(conn, exc)
            raise
        return done

    # -- integrity -------------------------------------------------------------------

    def append_existing(
        self,
        events: Iterable[Event],
        *,
        seals: SealBundle | None = None,
        beside: Beside | None = None,
    ) -> tuple[int, str]:
        """Append events that already have their place in a chain — a copy of another log —
        exactly as they are, in one transaction (``existing.append_existing``)."""
        return append_existing(self, events, seals=seals, beside=beside)

    def _replay(self, streams: Sequence[str]) -> Iterator[EventCore]:
        """The events of ``streams`` on this thread's connection (inside its transaction)."""
        return self.iter_events(stream=list(streams))
