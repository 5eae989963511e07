"""The projector contract as one test-case class, reused against every projector
(as the ``eventsourcing`` library reuses one recorder test case for every backend).

A subclass provides ``make`` (a fresh, empty projector) and ``reopen`` (the same store
opened again, as after a restart).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.projections.history import T0
from writegate.eventlog import Event
from writegate.gate import Gate
from writegate.projections import runner
from writegate.projections.contract import ProjectionGap, Projector
from writegate.projections.runner import rebuild, replay


class ProjectorContract:
    def make(self, request: pytest.FixtureRequest) -> Projector:
        raise NotImplementedError

    def reopen(self, projector: Projector, request: pytest.FixtureRequest) -> Projector:
        raise NotImplementedError

    @pytest.fixture
    def projector(self, request: pytest.FixtureRequest) -> Any:
        p = self.make(request)
        yield p
        p.close()

    def test_apply_moves_the_checkpoint_to_the_last_event(
        self, projector: Projector, events: list[Event]
    ) -> None:
        assert projector.checkpoint() == 0
        assert projector.apply(events) == events[-1].seq
        assert projector.checkpoint() == events[-1].seq

    def test_reapplying_events_changes_nothing(
        self, projector: Projector, events: list[Event]
    ) -> None:
        projector.apply(events)
        once = projector.snapshot()
        projector.apply(events)
        assert projector.snapshot() == once
        projector.apply(events[len(events) // 2 :])
        assert projector.snapshot() == once
        assert projector.checkpoint() == events[-1].seq

    def test_batch_size_does_not_matter(self, projector: Projector, events: list[Event]) -> None:
        projector.apply(events)
        whole = projector.snapshot()
        for size in (1, 3, 7):
            projector.reset()
            for start in range(0, len(events), size):
                projector.apply(events[start : start + size])
            assert projector.snapshot() == whole, f"batches of {size}"

    def test_a_gap_is_refused_and_changes_nothing(
        self, projector: Projector, events: list[Event]
    ) -> None:
        projector.apply(events[:3])
        before = projector.snapshot()
        with pytest.raises(ProjectionGap):
            projector.apply(events[5:])
        assert projector.checkpoint() == events[2].seq
        assert projector.snapshot() == before

    def test_reset_empties_the_store(self, projector: Projector, events: list[Event]) -> None:
        empty = projector.snapshot()
        projector.apply(events)
        assert projector.snapshot() != empty
        projector.reset()
        assert projector.checkpoint() == 0
        assert projector.snapshot() == empty

    def test_the_store_survives_a_restart(
        self, projector: Projector, events: list[Event], request: pytest.FixtureRequest
    ) -> None:
        projector.apply(events[:6])
        before = projector.snapshot()
        again = self.reopen(projector, request)
        try:
            assert again.checkpoint() == events[5].seq
            assert again.snapshot() == before
            again.apply(events[4:])  # overlapping: at-least-once delivery
            again.apply(events)
            assert again.checkpoint() == events[-1].seq
        finally:
            again.close()

    def test_a_rebuild_equals_one_apply_of_every_event(
        self,
        projector: Projector,
        history_gate: Gate,
        events: list[Event],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Whatever batches the runner cuts (staged stores get small ones)."""
        projector.apply(events)
        whole = projector.snapshot()
        monkeypatch.setattr(runner, "STAGED_BATCH", 3)
        result = rebuild(history_gate.log, projector, batch=5000)
        assert result.applied == len(events)
        assert projector.checkpoint() == events[-1].seq
        assert projector.snapshot() == whole

    def test_as_of_replays_the_store_as_it_was(
        self, projector: Projector, history_gate: Gate, events: list[Event]
    ) -> None:
        log = history_gate.log
        # step 5 of the history happened at T0 + 4 min; the store as of then has events
        # up to that step only
        moment = T0 + timedelta(minutes=4, seconds=30)
        cut = log.last_seq_at(moment)
        projector.apply([e for e in events if e.seq <= cut])
        expected = projector.snapshot()
        rebuild(log, projector)
        assert projector.checkpoint() == events[-1].seq
        result = replay(log, projector, as_of=moment)
        assert result.reset  # the store went back in time
        assert projector.checkpoint() == cut
        assert projector.snapshot() == expected
