"""Driving projectors from the log: status, replay, rebuild, follow.

The functions here are the Python API behind ``writegate status|replay|rebuild|follow``.
They read the log in pages, hand projectors consecutive batches and rely on the
projector contract (atomic checkpoint, idempotent re-application) for crash safety:
whatever stops a run, running again continues from the checkpoint. A store marked as
following another log is refused (``check_follows``): a rebuild, which resets it, is what
makes it this log's projection.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from writegate.eventlog import EventCore, Log, LogUnavailable
from writegate.eventlog.bulk import bulk
from writegate.eventlog.sealing import EXPIRED, FORGOTTEN
from writegate.projections.contract import (
    ForgetsInPlace,
    Inspected,
    Kept,
    Marked,
    ProjectionError,
    ProjectionGap,
    ProjectionOfAnotherLog,
    Projector,
    foreign,
)
from writegate.projections.regate import Regater

STAGED_BATCH = 128  # events per apply while a projector builds aside (see ``_apply``)
# events per apply when progress is reported: a batch is applied (and reported) whole, so a
# replay configured with 50,000 showed nothing until it ended; this many take a fraction of
# a second in every store, and a commit per piece costs little beside applying it
PROGRESS_BATCH = 2000
Progress = Callable[[int], None]  # called with the number of events just applied


@runtime_checkable
class Rendering(Protocol):
    """A projector whose output is rendered from its store when asked, not per batch (the
    JSONL snapshot): a replay or rebuild asks at its end, ``follow`` when due."""

    def flush(self, *, due_only: bool = False) -> bool: ...


@dataclass(frozen=True)
class ProjectionStatus:
    name: str
    checkpoint: int | None  # None: the store could not be asked
    head: int
    error: str | None = None
    other_log: str | None = None  # why it is not a projection of this log (None: it is)
    damage: str | None = None  # why its files do not match its checkpoint (None: they do)

    @property
    def lag(self) -> int | None:
        return None if self.checkpoint is None else self.head - self.checkpoint


@dataclass(frozen=True)
class ReplayResult:
    name: str
    applied: int
    checkpoint: int
    seconds: float
    reset: bool
    notes: tuple[str, ...] = ()  # what the operator should know: a file repaired, a log adopted
    resumed_from: int | None = None  # a resumed rebuild: the checkpoint it continued from

    @property
    def rate(self) -> float:
        return self.applied / self.seconds if self.seconds > 0 else 0.0


def status(log: Log, projectors: Mapping[str, Projector]) -> list[ProjectionStatus]:
    """Each projector's checkpoint, then the head: read in this order, a live log's head is
    never behind a checkpoint (no negative lag)."""
    asked: dict[str, ProjectionStatus] = {}
    for name, projector in projectors.items():
        try:
            checkpoint = projector.checkpoint()
            other = foreign(name, projector.mark(), log) if isinstance(projector, Marked) else None
            damage = projector.damage() if isinstance(projector, Inspected) else None
            asked[name] = ProjectionStatus(name, checkpoint, 0, None, other, damage)
        except ProjectionError as exc:  # one unreachable store must not hide the others
            asked[name] = ProjectionStatus(name, None, 0, str(exc))
        except Exception as exc:
            asked[name] = ProjectionStatus(name, None, 0, f"{type(exc).__name__}: {exc}")
    head = log.head()[0]
    return [replace(row, head=head) for row in asked.values()]


def check_follows(log: Log, projector: Projector) -> list[str]:
    """Refuse a store that is not ``log``'s projection (one line naming both logs), or whose
    file is damaged and is the store itself (nothing to write it again from but a rebuild).
    What is worth saying but not refusing is returned: a file that will be rendered again,
    a checkpoint that records no log (written before projections recorded theirs: it is
    adopted by this log, which the next checkpoint records — nothing older can be checked)."""
    notes = []
    if isinstance(projector, Marked):
        mark = projector.mark()
        if (other := foreign(projector.name, mark, log)) is not None:
            raise ProjectionOfAnotherLog(f"{other}; rebuild it to make it this log's")
        checkpoint = projector.checkpoint()
        if mark is None and checkpoint > 0:
            if log.hash_at(checkpoint) is None:
                raise ProjectionOfAnotherLog(
                    f"{projector.name} is at seq {checkpoint}, past the head of "
                    f"{log.describe()}, and records no log: rebuild it to make it this log's"
                )
            notes.append(
                f"{projector.name}: its checkpoint {checkpoint} records no log (written "
                f"before projections recorded theirs); it now records {log.describe()}"
            )
    damage = projector.damage() if isinstance(projector, Inspected) else None
    if damage is not None:
        if not isinstance(projector, Rendering):
            raise ProjectionError(f"{projector.name}: {damage}; rebuild it from the log")
        notes.append(f"{projector.name}: {damage}; rendered again from its model")
    return notes


def _batches(
    log: Log, after: int, to_seq: int, size: int, regater: Regater | None
) -> Iterator[list[EventCore]]:
    batch: list[EventCore] = []
    for event in log.iter_replayed(after_seq=after, to_seq=to_seq):
        batch.append(regater.event(event) if regater else event)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def replay(
    log: Log,
    projector: Projector,
    *,
    from_seq: int | None = None,
    to_seq: int | None = None,
    as_of: datetime | None = None,
    batch: int = 5000,
    progress: Progress | None = None,
) -> ReplayResult:
    """Bring ``projector`` to ``to_seq`` (or the last event at ``as_of``, or the head).

    From its checkpoint by default; ``from_seq`` re-applies from an earlier seq (safe: the
    contract makes re-application idempotent). A target behind the checkpoint means the
    store must go back in time, so it is reset and rebuilt up to the target.
    """
    started = time.perf_counter()
    notes = check_follows(log, projector)
    head = log.head()[0]
    target = head if to_seq is None else min(to_seq, head)
    if as_of is not None:
        target = min(target, log.last_seq_at(as_of))
    checkpoint = projector.checkpoint()
    back_in_time = target < checkpoint
    start = checkpoint + 1 if from_seq is None else from_seq
    if start > checkpoint + 1 and not back_in_time:
        raise ProjectionGap(
            f"{projector.name}: --from-seq {start} would skip events after the checkpoint "
            f"{checkpoint}; replay from {checkpoint + 1} or earlier"
        )
    receipt = None if back_in_time else _forgetting_in(log, projector, start - 1, target)
    reset = back_in_time or receipt is not None
    if reset:
        start = 1  # the reset empties the store: it is rebuilt from the beginning
    if receipt is not None:  # progress counts this replay's events, not a whole rebuild's
        progress = None
    applied, checkpoint, _ = _apply(
        log, projector, start - 1, target, batch, None, progress, reset=reset
    )
    if receipt is not None:
        notes.append(
            f"{projector.name}: event {receipt} forgot personal values: rebuilt from the log "
            "to let go of them"
        )
    if isinstance(projector, Marked) and projector.mark() is None and checkpoint > 0:
        projector.adopt()  # a store from before marks: this log's from now (see check_follows)
    return ReplayResult(
        projector.name,
        applied,
        checkpoint,
        time.perf_counter() - started,
        back_in_time,
        tuple(notes),
    )


def _forgetting_in(log: Log, projector: Projector, after: int, upto: int) -> int | None:
    """The first forgetting's or retention's receipt after ``after`` up to ``upto`` that
    ``projector`` cannot take out of itself (a file): such a store is not handed the
    receipt but rebuilt from the log, which reads those values as null — so a rebuild that
    fails leaves its checkpoint before the receipt, and the next replay tries again."""
    if isinstance(projector, ForgetsInPlace):
        return None
    page = log.read(after_seq=after, to_seq=upto, types=[FORGOTTEN, EXPIRED], limit=1)
    return page.events[0].seq if page.events else None


def rebuild(
    log: Log,
    projector: Projector,
    *,
    regater: Regater | None = None,
    batch: int = 5000,
    progress: Progress | None = None,
    resume_from: int | None = None,
) -> ReplayResult:
    """Reset and replay from seq 1 (file outputs are swapped in whole at the end).

    ``resume_from``: a rebuild of this projector died after it had reset it (a resumed job)
    and had kept the log up to this seq (the job's recorded progress); continue from what it
    built rather than start again: a staging projector continues its staged store if it
    can (else it starts over), one without staging — whose store was reset in place —
    continues from its checkpoint. Either continues from ``resume_from`` if its store kept
    more (re-applying is harmless), so that the resume starts where the job said it was."""
    started = time.perf_counter()
    head = log.head()[0]
    applied, checkpoint, resumed_from = _apply(
        log, projector, 0, head, batch, regater, progress, reset=True, resume=resume_from
    )
    seconds = time.perf_counter() - started
    return ReplayResult(
        projector.name, applied, checkpoint, seconds, resumed_from is None, (), resumed_from
    )


def _apply(
    log: Log,
    projector: Projector,
    after: int,
    target: int,
    batch: int,
    regater: Regater | None,
    progress: Progress | None,
    *,
    reset: bool,
    resume: int | None = None,
) -> tuple[int, int, int | None]:
    """Feed events ``after < seq <= target`` in batches; a reset happens inside the staging
    (if the projector stages), so readers never see the emptied store. Returns the events
    applied, the checkpoint, and the seq a resumed rebuild continued from (None: it did
    not): ``resume`` or the store's checkpoint, whichever is earlier.

    While staged, nothing is durable until the swap at the end, so the batch size means
    nothing to the store: small batches are applied while their events are still in the
    CPU's cache (a replay into the JSONL model runs about twice as fast as with 5,000)."""
    staged = getattr(projector, "staged", None) if reset else None
    size = min(batch, STAGED_BATCH) if staged else batch
    if progress is not None:
        size = min(size, PROGRESS_BATCH)
    applied = 0
    with bulk(), _aside(projector, reset, resume is not None) as resumed:
        if reset and not resumed:
            projector.reset()
        checkpoint = projector.checkpoint()
        first = min(checkpoint, resume) if resumed and resume is not None else after
        resumed_from = first if resumed else None
        for events in _batches(log, first, target, size, regater):
            checkpoint = projector.apply(events)
            applied += len(events)
            if progress:
                progress(len(events))
    if isinstance(projector, Rendering):
        projector.flush()
    return applied, checkpoint, resumed_from


def kept(projector: Projector) -> int:
    """What of ``projector``'s checkpoint would outlive its process dying now: the progress
    a job may record, since a resumed job continues from there."""
    return projector.kept() if isinstance(projector, Kept) else projector.checkpoint()


@contextmanager
def _aside(projector: Projector, reset: bool, resume: bool) -> Iterator[bool]:
    """Where a reset replay builds: inside the projector's staging when it stages, else in
    place; whether it continues an earlier rebuild's work (see ``rebuild``)."""
    staged = getattr(projector, "staged", None) if reset else None
    if staged is None:
        yield reset and resume
    elif resume and getattr(projector, "resumes_staging", False):
        with staged(resume=True) as resumed:
            yield bool(resumed)
    else:
        with staged():
            yield False


def follow(
    log: Log,
    projectors: Mapping[str, Projector],
    *,
    stop: threading.Event,
    interval: float = 0.2,
    batch: int = 5000,
    on_batch: Callable[[str, int, int], Any] | None = None,
    retry_for: float = 60.0,
    on_lost: Callable[[str | None], Any] | None = None,
) -> None:
    """Keep every projector caught up until ``stop`` is set; when idle, wait for the log's
    next append (PostgreSQL's notification, at most ``interval`` seconds; on SQLite, a poll
    every ``interval`` seconds). Each batch is applied whole or not at all, so stopping (or
    dying) between batches loses nothing and doubles nothing. Projectors that render their
    output when asked are asked when due, and once more on stopping.

    A log whose database went away (a PostgreSQL restart) is reconnected to with growing
    pauses; it is read again from each checkpoint, so nothing is missed. ``on_lost`` is told
    the reason once it goes, and ``None`` once it is back; gone for longer than ``retry_for``
    seconds, ``LogUnavailable`` is raised."""
    for projector in projectors.values():
        check_follows(log, projector)
    rendering = [p for p in projectors.values() if isinstance(p, Rendering)]
    lost_at: float | None = None
    pause = 0.1
    while not stop.is_set():
        try:
            busy = _catch_up(log, projectors, batch, on_batch, stop)
            for projector in rendering:
                projector.flush(due_only=True)
            if not busy:
                log.wait_for_append(interval, stop)
        except LogUnavailable as exc:
            now = time.monotonic()
            if lost_at is None:
                lost_at = now
                if on_lost:
                    on_lost(str(exc))
            elif now - lost_at > retry_for:
                raise LogUnavailable(f"{exc} (unreachable for over {retry_for:g} s)") from exc
            stop.wait(pause)
            pause = min(pause * 2, 5.0)
            continue
        if lost_at is not None:
            lost_at, pause = None, 0.1
            if on_lost:
                on_lost(None)
    for projector in rendering:
        projector.flush()


def _catch_up(
    log: Log,
    projectors: Mapping[str, Projector],
    batch: int,
    on_batch: Callable[[str, int, int], Any] | None,
    stop: threading.Event,
) -> bool:
    """One batch for each projector that is behind; whether any was."""
    busy = False
    for name, projector in projectors.items():
        if stop.is_set():
            break
        checkpoint = projector.checkpoint()
        events = log.read(after_seq=checkpoint, limit=batch).events
        if events:
            busy = True
            if _forgetting_in(log, projector, checkpoint, events[-1].seq) is None:
                new = projector.apply(events)
            else:
                new = _apply(log, projector, 0, events[-1].seq, batch, None, None, reset=True)[1]
            if on_batch:
                on_batch(name, len(events), new)
    return busy
