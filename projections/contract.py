"""The one contract every projection keeps, so any store can be rebuilt from the log.

A projector turns an ordered run of events into a store. It

* applies a batch and records its checkpoint (the last ``seq`` applied) atomically with
  the batch's effects: after a crash the store and its checkpoint agree;
* is idempotent: re-applying events it has already applied — any suffix, in order —
  leaves the same store, so at-least-once delivery and replays after a crash are safe;
* refuses a gap (a batch that starts after ``checkpoint + 1``), since that would lose events;
* can be reset to empty (checkpoint 0).

``tests/projections/contract.py`` holds the one test-case class run against every projector.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from writegate.eventlog import EventCore


class ProjectionError(Exception):
    """A projection could not be applied; its checkpoint did not move."""


class ProjectionGap(ProjectionError):
    """Applying this batch would skip events."""


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
