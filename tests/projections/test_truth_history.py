"""The recorded histories the projector contract replays: between them they speak the whole
event language, and each is a chain that verifies, as the gate wrote it."""

from __future__ import annotations

from pathlib import Path

import pytest

from writegate.eventlog import EventLog
from writegate.language import EVENT_TYPES
from writegate.projections.testing import HISTORY, TRUTH_HISTORY, history


def test_the_histories_speak_the_whole_event_language() -> None:
    spoken = {event.type for path in (HISTORY, TRUTH_HISTORY) for event in history(path)}
    assert spoken == set(EVENT_TYPES)


@pytest.mark.parametrize("path", [HISTORY, TRUTH_HISTORY], ids=["0.1", "truth"])
def test_each_history_is_a_chain_that_verifies(path: Path, tmp_path: Path) -> None:
    with EventLog(tmp_path / "history.db") as log:
        log.append_existing(history(path))
        report = log.verify()
        assert report.ok, report
        assert report.checked == len(history(path))
