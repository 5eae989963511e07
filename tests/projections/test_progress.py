"""A replay reports its progress as it goes, not once at the end: however large the
configured batch, the events are applied (and reported) in pieces of ``PROGRESS_BATCH``."""

from __future__ import annotations

from pathlib import Path

import pytest

from writegate.eventlog import Event
from writegate.gate import Gate
from writegate.projections import runner
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.prov import ProvProjector


@pytest.mark.parametrize("kind", ["jsonl", "prov"])
def test_a_replay_reports_progress_in_pieces_of_the_progress_batch(
    tmp_path: Path,
    history_gate: Gate,
    events: list[Event],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    monkeypatch.setattr(runner, "PROGRESS_BATCH", 4, raising=False)
    log = history_gate.log
    projector = (
        JsonlProjector(tmp_path / "g.jsonl", log)
        if kind == "jsonl"
        else ProvProjector(tmp_path / "p.nt", log=log)
    )
    seen: list[int] = []
    result = runner.replay(log, projector, batch=50_000, progress=seen.append)
    projector.close()
    assert result.applied == len(events)
    assert seen == [4] * (len(events) // 4) + ([len(events) % 4] if len(events) % 4 else [])
