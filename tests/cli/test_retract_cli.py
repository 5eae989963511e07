"""``writegate retract`` / ``unretract`` run as an operator runs them, on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import writegate
from tests.conftest import SEED_SCHEMA
from tests.retracted import NAMES, named, said, world
from writegate.gate import Gate


def made(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
        return db, world(gate)


def test_retract_reports_takes_back_and_unretract_puts_back(tmp_path: Path) -> None:
    db, ids = made(tmp_path)
    with Gate.open(db) as gate:
        before = {name: said(gate, name) for name in NAMES}
    head = writegate(db, "status").stdout

    report = json.loads(writegate(db, "retract", "--source", "S", "--dry-run", "--json").stdout)
    assert report["dry_run"] is True
    assert sorted(report["retracted"]) == [named("Ann"), named("Cleo")]
    assert report["reverted"] == [named("Bob")]
    assert report["merges"] == [ids["merge"]]
    assert writegate(db, "status").stdout == head  # nothing appended
    text = writegate(db, "retract", "--source", "S", "--dry-run").stdout
    assert text.startswith("would take back 4 facts: 1 reverted, 2 retracted, 1 kept")
    assert f"merge proposed for undoing: {ids['merge']}" in text

    done = writegate(db, "retract", "--source", "S", "--reason", "S was a hoax").stdout
    first = done.splitlines()[0]
    assert first.startswith("retraction r-")
    retraction = first.split()[1].rstrip(":")
    assert "retract" in writegate(db, "jobs", "list").stdout
    writegate(db, "verify")
    with Gate.open(db) as gate:
        assert said(gate, "Ann") is None
        assert [p.operation for p in gate.reviews.queue().proposals] == ["unmerge_nodes"]
    trail = writegate(db, "log", "--type", "source.retracted", "--json").stdout
    assert retraction in trail
    eve = json.loads(writegate(db, "audit", "node", "Person:name=Eve", "--format", "json").stdout)
    assert eve["entries"][-1]["type"] == "source.retracted"  # the audit names it
    assert [s["source"] for s in eve["supported_by"]] == ["T"]

    back = writegate(db, "unretract", retraction).stdout
    assert back.startswith(f"unretracted {retraction}: 4 facts put back")
    writegate(db, "verify")
    with Gate.open(db) as gate:
        assert {name: said(gate, name) for name in NAMES} == before


def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    db, _ = made(tmp_path)
    nothing = writegate(db, "retract", "--reason", "why", code=1)
    assert nothing.stderr.strip().splitlines() == [
        "error: INVALID_ARGUMENT: a retraction names a source, agent, method or observation "
        "to take back"
    ]
    when = writegate(db, "retract", "--source", "S", "--since", "soon", "--dry-run", code=2)
    assert when.stderr.strip().splitlines()[-1] == (  # as every command's time is read
        "Error: Invalid value for '--since': 'soon' is not an ISO 8601 time (or now)"
    )
    reasonless = writegate(db, "retract", "--source", "S", code=1)
    assert "a retraction needs a reason" in reasonless.stderr
    missing = writegate(db, "unretract", "r-nope", code=1)
    assert "RETRACTION_NOT_FOUND" in missing.stderr
    assert "'r-nope'" in missing.stderr
