"""Each agent's writes and refusals over time, as the report counts them: by hour while
the log spans two days or less, else by day, and never more buckets than kept."""

from __future__ import annotations

from pathlib import Path

from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.audit.activity import DAYS, Tally
from writegate.gate.audit.auditor import Auditor
from writegate.gate.audit.report import build_report

SCHEMA = {
    "nodes": {
        "Person": {
            "merge_keys": ["name"],
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string", "conflict": "reject"},
            },
        }
    }
}


def write(gate: Gate, email: str) -> object:
    return gate.write_node(
        label="Person",
        merge_keys={"name": "Ada"},
        properties={"email": email},
        source="s",
        extraction_method="api",
    )


def test_a_short_log_is_counted_by_hour_per_agent() -> None:
    tally = Tally()
    tally.wrote("2026-11-26T07:10:00Z", "a")
    tally.wrote("2026-11-26T07:50:00Z", "a")
    tally.wrote("2026-11-26T09:00:00Z", "b")
    tally.refused("2026-11-26T09:30:00Z", "a")
    made = tally.activity()
    assert made.unit == "hour"
    assert [(b.start, b.writes, b.rejections) for b in made.buckets] == [
        ("2026-11-26T07", {"a": 2}, {}),
        ("2026-11-26T09", {"b": 1}, {"a": 1}),
    ]


def test_a_long_log_is_counted_by_day_and_keeps_the_last_days() -> None:
    tally = Tally()
    for day in range(DAYS + 10):
        tally.wrote(f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T12:00:00Z", "a")
    made = tally.activity()
    assert made.unit == "day"
    assert len(made.buckets) == DAYS
    assert made.buckets[-1].start == f"2026-{1 + (DAYS + 9) // 28:02d}-{1 + (DAYS + 9) % 28:02d}"


def test_the_report_counts_a_refused_write_beside_the_agents_writes(tmp_path: Path) -> None:
    with Gate.open(tmp_path / "log.db", default_actor=Actor(agent="hr")) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        first = write(gate, "ada@example.org")
        assert isinstance(first, WriteNodeResult), first
        refused = write(gate, "other@example.org")
        assert isinstance(refused, Rejected), refused
        report = build_report(Auditor(gate.log), 0, [])
    [bucket] = report.activity.buckets
    assert report.activity.unit == "hour"
    assert (bucket.writes, bucket.rejections) == ({"hr": 1}, {"hr": 1})
