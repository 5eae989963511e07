"""Copying a log to another database, event by event, its chain unchanged.

The hash chain does not depend on the database, so a copy whose head hash equals the
source's holds the same history. Events go across in batches, each one transaction that
checks every event's place and hash (``append_existing``); a copy cut short resumes from
its head, since whatever it holds is a checked prefix of the source.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

from writegate.eventlog.contract import Beside, Log
from writegate.eventlog.errors import EventLogError
from writegate.eventlog.sealing import SealBundle


def copy_log(
    source: Log,
    dest: Log,
    *,
    batch: int = 1000,
    progress: Callable[[int, int], None] | None = None,
    beside: Beside | None = None,
) -> tuple[int, str]:
    """Append to ``dest`` every event of ``source`` it does not hold yet; returns the new
    head of ``dest``. ``dest`` must be empty or a copy of the start of ``source``.
    ``progress(copied_seq, source_head)`` is called after each batch; ``beside``: a store
    kept beside ``dest`` that the forgettings since its head reach too (``erasing``)."""
    with source.snapshot():
        target = source.head()
        at, digest = dest.head()
        if at > target[0] or (at and source.hash_at(at) != digest):
            raise EventLogError(
                f"{dest.describe()} holds a history that is not the start of "
                f"{source.describe()}'s (head {at}); copy into an empty log"
            )
        head = (at, digest)
        seals: SealBundle | None = (
            source.export_seals()
        )  # personal values go across as they are, sealed
        events = source.iter_events(after_seq=at, to_seq=target[0], batch=batch, sealed=True)
        while chunk := list(islice(events, batch)):
            head = dest.append_existing(chunk, seals=seals, beside=beside)
            seals = None
            if progress is not None:
                progress(head[0], target[0])
    if head != target:
        raise EventLogError(f"the copy ended at {head[0]}, not at the source's head {target[0]}")
    return head
