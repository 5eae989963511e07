"""The projector contract's history (``writegate.projections.testing``) on a frozen clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from freezegun import freeze_time

from writegate.gate import Gate
from writegate.projections.testing import ADA, BOB, prov, write_history

T0 = datetime(2032, 1, 1, 9, 0, tzinfo=UTC)
__all__ = ["ADA", "BOB", "T0", "build_history", "prov"]


def build_history(gate: Gate, minutes: int = 1) -> list[datetime]:
    """The history, one step a minute from T0 under freezegun; returns each step's time."""
    steps: list[datetime] = []
    with freeze_time(T0) as clock:

        def step() -> None:
            steps.append(datetime.now(UTC))
            clock.tick(timedelta(minutes=minutes))

        write_history(gate, step)
    return steps
