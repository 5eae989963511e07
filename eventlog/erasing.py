"""Forgetting in the log: the transaction of ``Log.forget``, and the forgettings a copy carries.

A copy continued from an earlier one, or a backup restored and brought up to date from a log
that went on (``copy``), holds the values of every subject forgotten since it was made (and
of every value a retention expired since: ``values.expired``, handled alike); the
receipts of those forgettings come with the events after its head. ``append_existing`` hands
each receipt here as it appends it: the subjects this log still holds lose their keys and
values, each inline read model that can (``Forgets``: the state) makes their rows again
as the log now reads them, and a store kept beside the log (``Beside``: the gate's refusals)
lets go of the rows holding those values, in the same transaction: the copy then is what a
copy made after the forgetting would be, and ``verify`` finds the values erased, not missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

from writegate.eventlog.contract import Beside, Log
from writegate.eventlog.events import DraftEvent, Event, EventCore
from writegate.eventlog.expiring import drop, held
from writegate.eventlog.sealing import (
    EXPIRED,
    FORGOTTEN,
    MARK,
    ForgetPlan,
    SubjectsForgotten,
    ValuesExpired,
    clear_values,
    destroy,
    install,
    plan_forget,
)
from writegate.eventlog.sql import Sql
from writegate.eventlog.transaction import Decide, Transaction

Replay = Callable[[Sequence[str]], Iterable[EventCore]]  # the events of some streams, in order


@runtime_checkable
class Forgets(Protocol):
    """An inline read model that takes forgotten subjects' rows out of itself."""

    def forget_subjects(
        self, conn: Sql, located: Sequence[tuple[str, str]], replay: Replay
    ) -> dict[str, int]:
        """Make again, as ``replay`` now reads their streams, the rows of the subjects
        ``located`` names ((subject id, locator): a node's clear identity, or an
        observation's id); returns the rows let go of per table."""
        ...


def forgetting(
    locators: Sequence[str],
    reason: str,
    also: Callable[[Transaction, ForgetPlan], dict[str, int]] | None,
    prepare: Callable[[Sql], None],
    done: list[tuple[ForgetPlan, Event | None]],
) -> Decide:
    """``Log.forget``'s transaction: the plan, the caller's stores (``also``), the keys and
    values destroyed, the receipt; each run's plan and receipt (None: nothing sealed) is
    added to ``done``."""

    def decide(tx: Transaction) -> None:
        install(tx.conn)
        prepare(tx.conn)
        plan = plan_forget(tx.conn, locators)
        if not plan.subjects:
            done.append((plan, None))
            return
        counts = plan.counts()
        if also is not None:
            counts.update(also(tx, plan))
        destroy(tx.conn, plan.subjects)
        receipt = SubjectsForgotten(
            subjects=plan.subjects, events=plan.events, reason=reason, counts=counts
        )
        streams = tuple(f"forgotten:{subject}" for subject in plan.subjects)
        done.append((plan, tx.emit(DraftEvent(FORGOTTEN, receipt.model_dump(), streams))))

    return decide


def erase_copied(
    conn: Sql,
    receipt: Event,
    inline: Iterable[object],
    replay: Replay,
    beside: Beside | None = None,
) -> int:
    """Forget on ``conn`` what the copied ``receipt`` forgot (or, a retention's, expired);
    returns how many of its subjects (values) this log still held (0: nothing to do, as in
    a copy made after it)."""
    if receipt.type == EXPIRED:
        return _expire_copied(conn, receipt, inline, replay, beside)
    subjects = SubjectsForgotten.model_validate(receipt.payload).subjects
    if not subjects:
        return 0
    install(conn)  # a log that never sealed has no tables to look in
    located = _located(conn, subjects)
    if not located:
        return 0
    gone = [subject for subject, _ in located]
    if beside is not None:  # the values in the clear too: only strings (a number is anywhere)
        clear = [v for v in clear_values(conn, gone).values() if v.startswith('"')]
        beside(conn, [*(f"{MARK}{subject}." for subject in gone), *clear])
    destroy(conn, gone)  # first: the replay reads null
    for projector in inline:
        if isinstance(projector, Forgets):
            projector.forget_subjects(conn, located, replay)
    return len(located)


def _located(conn: Sql, subjects: Sequence[str]) -> list[tuple[str, str]]:
    """The (subject, locator) of each of ``subjects`` whose key this log still holds."""
    marks = ", ".join("?" * len(subjects))
    return [
        (str(r[0]), str(r[1]))
        for r in conn.execute(
            f"SELECT subject, locator FROM subject_keys WHERE subject IN ({marks})", subjects
        ).fetchall()
    ]


def _expire_copied(
    conn: Sql, receipt: Event, inline: Iterable[object], replay: Replay, beside: Beside | None
) -> int:
    """The values a copied ``values.expired`` receipt names that ``conn`` still holds deleted,
    and their subjects' rows made again as the log now reads them (their keys stay)."""
    named = ValuesExpired.model_validate(receipt.payload).values
    install(conn)
    found = held(conn, [(s, d) for s, _, d in (value.partition(".") for value in named)])
    if not found:
        return 0
    if beside is not None:  # as a retention lets go of them in the log
        beside(conn, [*(f'{MARK}{s}.{d}"' for s, d in found), *found.values()])
    drop(conn, found)
    subjects = sorted({subject for subject, _ in found})
    located = _located(conn, subjects)
    for projector in inline:
        if isinstance(projector, Forgets):
            projector.forget_subjects(conn, located, replay)
    return len(found)


def let_go(conn: Sql, subjects: Iterable[str], elsewhere: Callable[[str], bool]) -> int:
    """Destroy the keys and values of those of ``subjects`` that no event holds a value of
    and a store beside the log no longer does (``elsewhere``): a subject only its rows
    held — a refusal's of a person the log never had — once they are deleted. How many."""
    gone = []
    for subject in sorted(set(subjects)):
        pattern = f"%{MARK}{subject}.%"
        held_by = conn.execute(
            "SELECT 1 FROM events WHERE payload LIKE ? OR request LIKE ? OR provenance LIKE ? "
            "LIMIT 1",
            (pattern, pattern, pattern),
        ).fetchone()
        if held_by is None and not elsewhere(subject):
            gone.append(subject)
    destroy(conn, gone)
    return len(gone)


def forgettings_after(log: Log, seq: int) -> int:
    """How many ``subject.forgotten`` receipts ``log`` holds after ``seq``: what a copy
    continued from ``seq`` (or a backup brought up to date from it) applied to itself."""
    return sum(1 for _ in log.iter_events(after_seq=seq, types=[FORGOTTEN]))


def subjects_held(log: Log) -> int:
    """How many subjects' keys (and values) ``log`` holds: what a later forgetting elsewhere
    would not reach in it (a backup's, say)."""
    if not log.has_table("subject_keys"):
        return 0
    with log.snapshot() as conn:
        return int(conn.execute("SELECT count(*) FROM subject_keys").fetchone()[0])


__all__ = [
    "Beside",
    "Forgets",
    "Replay",
    "erase_copied",
    "forgettings_after",
    "let_go",
    "subjects_held",
]
