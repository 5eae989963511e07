"""The projector contract as a reusable test case, shipped with the package (as the
``eventsourcing`` library ships its recorder tests), and the history it replays.

A projector's test subclasses ``ProjectorContractTestCase`` and says how to make a fresh
store (and, if it differs, how to reopen it, as after a restart). Two recorded histories
ship beside this module, each written through the real gate a step a minute and loaded
into a fresh log as it was, hashes and all: ``contract_history.jsonl`` (writegate 0.1:
remaps, stubs, updates, property removal, a batch, cascades, deletions) and
``contract_history_truth.jsonl`` (the rest of the event language: supersessions of a
property and of a functional relationship, valid time, writes held for review then
approved or rejected, a write entity resolution landed on an existing node, a merge and its
undoing). A test case replays ``history_file``; run each projector's case for both
(``TRUTH_HISTORY``). Plain ``unittest``: nothing else is needed to run it.
"""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path
from typing import ClassVar

from writegate.eventlog import Event, EventCore, EventLog, Log
from writegate.eventlog.rows import row_to_event
from writegate.eventlog.tables import EVENT_COLUMNS
from writegate.projections import runner
from writegate.projections.contract import (
    Marked,
    ProjectionGap,
    ProjectionOfAnotherLog,
    Projector,
    foreign,
)

HISTORY = Path(__file__).resolve().parent / "contract_history.jsonl"
TRUTH_HISTORY = HISTORY.with_name("contract_history_truth.jsonl")


def history(path: Path = HISTORY) -> list[Event]:
    """A recorded history's events, as the log stored them."""
    columns = [c.strip() for c in EVENT_COLUMNS.split(",")]
    return [
        row_to_event(tuple(json.loads(line)[c] for c in columns))
        for line in path.read_text().splitlines()
    ]


class ProjectorContractTestCase(unittest.TestCase):
    """Every promise of ``writegate.projections.contract.Projector``, checked on a real store."""

    __test__: ClassVar[bool] = False  # the subclasses that fill ``create`` are the tests
    history_file: ClassVar[Path] = HISTORY

    def create(self) -> Projector:
        """A fresh, empty store (under ``self.scratch``)."""
        raise NotImplementedError

    def create_log(self, path: Path) -> Log:
        """The log the history is copied into (a follower of the read model, the vectors',
        needs the log's state kept inline)."""
        return EventLog(path)

    def reopen(self, projector: Projector) -> Projector:
        """The same store opened again, as after a restart (close ``projector`` first)."""
        projector.close()
        return self.create()

    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.scratch = Path(directory.name)
        self.log = self.create_log(self.scratch / "history.db")
        self.addCleanup(self.log.close)
        self.log.append_existing(history(self.history_file))
        self.events: list[EventCore] = list(self.log.iter_replayed())
        self.projector = self.create()
        self.addCleanup(self._close)

    def _close(self) -> None:
        self.projector.close()  # the store open now (a restart test reopens it)

    def test_apply_moves_the_checkpoint_to_the_last_event(self) -> None:
        assert self.projector.checkpoint() == 0
        assert self.projector.apply(self.events) == self.events[-1].seq
        assert self.projector.checkpoint() == self.events[-1].seq

    def test_reapplying_events_changes_nothing(self) -> None:
        events, projector = self.events, self.projector
        projector.apply(events)
        once = projector.snapshot()
        projector.apply(events)
        assert projector.snapshot() == once
        projector.apply(events[len(events) // 2 :])
        assert projector.snapshot() == once
        assert projector.checkpoint() == events[-1].seq

    def test_batch_size_does_not_matter(self) -> None:
        events, projector = self.events, self.projector
        projector.apply(events)
        whole = projector.snapshot()
        for size in (1, 3, 7):
            projector.reset()
            for start in range(0, len(events), size):
                projector.apply(events[start : start + size])
            assert projector.snapshot() == whole, f"batches of {size}"

    def test_a_gap_is_refused_and_changes_nothing(self) -> None:
        events, projector = self.events, self.projector
        projector.apply(events[:3])
        before = projector.snapshot()
        with self.assertRaises(ProjectionGap):
            projector.apply(events[5:])
        assert projector.checkpoint() == events[2].seq
        assert projector.snapshot() == before

    def test_reset_empties_the_store(self) -> None:
        empty = self.projector.snapshot()
        self.projector.apply(self.events)
        assert self.projector.snapshot() != empty
        self.projector.reset()
        assert self.projector.checkpoint() == 0
        assert self.projector.snapshot() == empty

    def test_the_store_survives_a_restart(self) -> None:
        events = self.events
        self.projector.apply(events[:6])
        before = self.projector.snapshot()
        self.projector = self.reopen(self.projector)
        assert self.projector.checkpoint() == events[5].seq
        assert self.projector.snapshot() == before
        self.projector.apply(events[4:])  # overlapping: at-least-once delivery
        self.projector.apply(events)
        assert self.projector.checkpoint() == events[-1].seq

    def test_a_rebuild_equals_one_apply_of_every_event(self) -> None:
        """Whatever batches the runner cuts (staged stores get small ones)."""
        self.projector.apply(self.events)
        whole = self.projector.snapshot()
        staged, runner.STAGED_BATCH = runner.STAGED_BATCH, 3
        try:
            result = runner.rebuild(self.log, self.projector, batch=5000)
        finally:
            runner.STAGED_BATCH = staged
        assert result.applied == len(self.events)
        assert self.projector.checkpoint() == self.events[-1].seq
        assert self.projector.snapshot() == whole

    def test_as_of_replays_the_store_as_it_was(self) -> None:
        log, events = self.log, self.events
        moment = events[len(events) // 2].occurred_at  # the steps are a minute apart
        cut = log.last_seq_at(moment)
        self.projector.apply([e for e in events if e.seq <= cut])
        expected = self.projector.snapshot()
        runner.rebuild(log, self.projector)
        assert self.projector.checkpoint() == events[-1].seq
        result = runner.replay(log, self.projector, as_of=moment)
        assert result.reset  # the store went back in time
        assert self.projector.checkpoint() == cut
        assert self.projector.snapshot() == expected


class MarkedContractTestCase(ProjectorContractTestCase):
    """The promise of a store that records the log it follows (``contract.Marked``): made
    by ``create`` with ``self.log``."""

    __test__ = False

    def test_the_checkpoint_records_the_log_it_follows(self) -> None:
        projector = self.projector
        assert isinstance(projector, Marked)
        runner.replay(self.log, projector, to_seq=self.events[4].seq)
        mark = projector.mark()
        assert mark is not None
        assert (mark.seq, mark.hash) == (self.events[4].seq, self.log.hash_at(mark.seq))
        assert foreign(projector.name, mark, self.log) is None
        self.projector = self.reopen(projector)
        assert isinstance(self.projector, Marked)
        assert self.projector.mark() == mark

    def test_another_logs_store_is_refused(self) -> None:
        other = EventLog(self.scratch / "other.db")
        self.addCleanup(other.close)
        other_history = TRUTH_HISTORY if self.history_file == HISTORY else HISTORY
        other.append_existing(history(other_history))
        projector = self.projector
        assert isinstance(projector, Marked)
        runner.replay(self.log, projector)
        before = projector.snapshot()
        with self.assertRaises(ProjectionOfAnotherLog):
            runner.replay(other, projector)
        assert projector.snapshot() == before
        assert foreign(projector.name, projector.mark(), other) is not None
