"""Each agent's writes and refusals over time: what the report draws as charts.

Counted by hour as the report reads the log and the rejections table (one pass, as it
already makes), then kept bounded: the last ``HOURS`` hours when the log spans no more,
else the last ``DAYS`` days, so the answer's size never grows with the log.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

HOURS = 48
DAYS = 60
_OUT = ConfigDict(extra="forbid", frozen=True)


class ActivityBucket(BaseModel):
    model_config = _OUT

    start: str  # "2026-11-26T07" (an hour) or "2026-11-26" (a day), UTC
    writes: dict[str, int]  # by agent
    rejections: dict[str, int]  # by agent


class Activity(BaseModel):
    """The buckets oldest first, each present only if something happened in it."""

    model_config = _OUT

    unit: Literal["hour", "day"]
    buckets: list[ActivityBucket]


class Tally:
    """Counts (hour, agent) pairs as the report's pass meets writes and refusals."""

    def __init__(self) -> None:
        self.writes: Counter[tuple[str, str]] = Counter()
        self.rejections: Counter[tuple[str, str]] = Counter()

    def wrote(self, at: str, agent: str) -> None:
        self.writes[(at[:13], agent)] += 1

    def refused(self, at: str, agent: str) -> None:
        self.rejections[(at[:13], agent)] += 1

    def activity(self) -> Activity:
        hours = sorted({hour for hour, _ in (*self.writes, *self.rejections)})
        hourly = len(hours) <= 1 or _span_hours(hours[0], hours[-1]) < HOURS
        width, keep = (13, HOURS) if hourly else (10, DAYS)
        buckets: dict[str, tuple[Counter[str], Counter[str]]] = {}
        for counter, side in ((self.writes, 0), (self.rejections, 1)):
            for (hour, agent), n in counter.items():
                buckets.setdefault(hour[:width], (Counter(), Counter()))[side][agent] += n
        return Activity(
            unit="hour" if hourly else "day",
            buckets=[
                ActivityBucket(
                    start=start, writes=dict(sorted(w.items())), rejections=dict(sorted(r.items()))
                )
                for start, (w, r) in sorted(buckets.items())[-keep:]
            ],
        )


def _span_hours(first: str, last: str) -> float:
    def moment(hour: str) -> datetime:
        return datetime.fromisoformat(hour + ":00:00+00:00")

    return (moment(last) - moment(first)).total_seconds() / 3600
