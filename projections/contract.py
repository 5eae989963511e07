"""The one contract every projection keeps, so any store can be rebuilt from the log.

A projector turns an ordered run of events into a store. It

* applies a batch and records its checkpoint (the last ``seq`` applied) atomically with
  the batch's effects: after a crash the store and its checkpoint agree;
* is idempotent: re-applying events it has already applied — any suffix, in order —
  leaves the same store, so at-least-once delivery and replays after a crash are safe;
* refuses a gap (a batch that starts after ``checkpoint + 1``), since that would lose events;
* can be reset to empty (checkpoint 0);
* records which log it follows (``LogMark``, beside its checkpoint), so that a projection
  of another log, or of a log rewritten under it, is refused rather than continued.

``tests/projections/contract.py`` holds the one test-case class run against every projector.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import EventCore, Log


class ProjectionError(Exception):
    """A projection could not be applied; its checkpoint did not move."""


class ProjectionGap(ProjectionError):
    """Applying this batch would skip events."""


class ProjectionOfAnotherLog(ProjectionError):
    """The store follows another log (or this one rewritten under it): continuing it from
    this log would mix two histories in one store."""


class LogMark(BaseModel):
    """Which log a projection follows, and how far: one model for every projector, stored
    with its checkpoint (in the same write). Two logs differ in their first event's hash;
    a log rewritten under the projection, or a copy of an earlier moment, differs at (or
    stops before) the event at the checkpoint. ``log`` is where it was, for messages only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    log: str
    genesis: str  # the hash of the log's first event
    seq: int
    hash: str  # the hash of event ``seq``


def mark_at(log: Log | None, seq: int) -> LogMark | None:
    """``log``'s mark at ``seq`` (None: no log given, an empty store, or ``seq`` past the
    head, where nothing can be marked)."""
    if log is None or seq <= 0:
        return None
    genesis, at = log.hash_at(1), log.hash_at(seq)
    if genesis is None or at is None:
        return None
    where = log.describe()  # a file's whole path: a relative one means nothing elsewhere
    if (path := Path(where)).exists():
        where = str(path.resolve())
    return LogMark(log=where, genesis=genesis, seq=seq, hash=at)


def foreign(name: str, mark: LogMark | None, log: Log) -> str | None:
    """Why the projection ``name`` marked ``mark`` is not a projection of ``log`` (one line
    naming both), or None if it is — or cannot be told (no mark: an empty store, or one
    written before projections recorded their log)."""
    if mark is None:
        return None
    here = log.describe()
    genesis = log.hash_at(1)
    if genesis != mark.genesis:
        first = f"first event {genesis[:12]}" if genesis else "empty"
        return (
            f"{name} follows another log ({mark.log}, first event {mark.genesis[:12]}), "
            f"not {here} ({first})"
        )
    at = log.hash_at(mark.seq)
    if at is None:
        return (
            f"{name} is at seq {mark.seq} of {mark.log}, past the head of {here}: it follows "
            "a longer history of this log (a backup's projections are the live log's)"
        )
    if at != mark.hash:
        return (
            f"{name} follows another history ({mark.log}): its event {mark.seq} is "
            f"{mark.hash[:12]}, {here}'s is {at[:12]} (rewritten under it?)"
        )
    return None


@runtime_checkable
class Marked(Protocol):
    """A projector that records the log it follows (file and graph stores)."""

    def mark(self) -> LogMark | None:
        """The log and position recorded with the checkpoint (None: none recorded)."""
        ...

    def adopt(self) -> None:
        """Record the log's mark at the checkpoint as it is (a store from before marks)."""
        ...


@runtime_checkable
class Projector(Protocol):
    name: str

    def checkpoint(self) -> int: ...

    def apply(self, events: Sequence[EventCore]) -> int:
        """Apply ``events`` (consecutive seqs) and return the new checkpoint."""
        ...

    def reset(self) -> None: ...

    def snapshot(self) -> Any:
        """The whole store in a comparable form (equal snapshots: equal stores)."""
        ...

    def close(self) -> None: ...


def check_batch(name: str, checkpoint: int, events: Sequence[EventCore]) -> None:
    """Raise unless ``events`` are consecutive and start at or before ``checkpoint + 1``."""
    if not events:
        return
    if events[0].seq > checkpoint + 1:
        raise ProjectionGap(
            f"{name}: batch starts at seq {events[0].seq} but the checkpoint is {checkpoint}"
        )
    for before, after in itertools.pairwise(events):
        if after.seq != before.seq + 1:
            raise ProjectionGap(f"{name}: seq {before.seq} is followed by {after.seq}")


@runtime_checkable
class ForgetsInPlace(Protocol):
    """A projector that takes a forgetting's or a retention's receipt out of its store as it
    applies it (the graph store patches its nodes, the vectors are made again): the runner
    need not rebuild it for one, as it rebuilds a file."""

    forgets_in_place: Literal[True]


@runtime_checkable
class Inspected(Protocol):
    """A projector whose files can be found not to match their checkpoint (a file cut short
    by a crash, a full disk or a hand)."""

    def damage(self) -> str | None:
        """Why the files do not match the checkpoint, in one line (None: they do)."""
        ...


@runtime_checkable
class Kept(Protocol):
    """A projector that may hold applied events before it stores them (a JSONL model built
    aside stores a few thousand rows at a time): its checkpoint runs ahead of what a process
    that died now would leave, which is what a job's progress may claim."""

    def kept(self) -> int:
        """The last seq stored so as to outlive the process (a resumed rebuild's start)."""
        ...


@runtime_checkable
class Staging(Protocol):
    """A projector that rebuilds into files aside (``staged``), which a rebuild whose process
    died leaves behind until they are continued or dropped."""

    def drop_staged(self) -> list[tuple[Path, int]]:
        """Remove what a dead rebuild left aside; each file removed, with its size."""
        ...
