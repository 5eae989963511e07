"""``writegate retain`` as an operator runs it: what expired (or would) on one line, the
result as JSON, the same answer as ``Gate.retain``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from freezegun import freeze_time

from tests.cli.conftest import writegate
from tests.conftest import AGENT, FIXTURES
from writegate.cli.main import cli
from writegate.gate import Gate, retention


def expired_log(tmp_path: Path) -> Path:
    """A new SQLite log of what ``expire_at`` writes."""
    db = tmp_path / "log.db"
    expire_at(db)
    return db


def expire_at(db: str | Path) -> None:
    """Ada's email superseded years ago, under a schema keeping superseded emails 30 days."""
    document: dict[str, Any] = yaml.safe_load((FIXTURES / "personal_schema.yaml").read_text())
    document["nodes"]["Person"]["properties"]["email"]["retention"] = "P30D"
    with freeze_time(datetime(2020, 1, 1, tzinfo=UTC)), Gate.open(db, default_actor=AGENT) as g:
        assert g.publish_schema(document).status == "published"
        for email in ("old@mail", "new@mail"):
            written = g.write_node(label="Person", merge_keys={"name": "Ada"},
                                   properties={"email": email}, source="hr.csv",
                                   extraction_method="parsed")  # fmt: skip
            assert written.status == "written", written


def test_retain_says_what_would_go_then_expires_it_once(tmp_path: Path) -> None:
    db = expired_log(tmp_path)
    dry = writegate(db, "retain", "--dry-run").stdout.strip()
    assert dry == "would expire 1 value: 2 events; 1 sealed value (retention: Person.email P30D)"
    done = writegate(db, "retain").stdout.strip()
    assert done.startswith("expired 1 value at seq 4: 2 events; ")
    assert "0 refusals, 1 sealed value" in done  # each store let go of, in words
    again = json.loads(writegate(db, "retain", "--format", "json").stdout)
    assert (again["status"], again["values"], again["seq"]) == ("ok", 0, None)
    assert b"old@mail" not in db.read_bytes()
    with Gate.open(db, create=False, default_actor=AGENT) as gate:
        assert gate.retain(dry_run=True).model_dump() == {**again, "dry_run": True}


def test_retain_and_forget_on_a_log_without_a_schema_are_refused_in_one_line(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    writegate(db, "init")
    for command in (("retain",), ("forget", "Person", "name=Ada")):
        refused = writegate(db, *command, code=1)
        assert refused.stderr.count("\n") == 1, refused.stderr
        assert "SCHEMA_SOURCE_UNAVAILABLE: no schema has been published" in refused.stderr


def test_retain_runs_as_a_job_on_the_log_which_jobs_list_shows_ended(tmp_path: Path) -> None:
    db = expired_log(tmp_path)
    done = writegate(db, "retain").stdout.strip()
    listed = json.loads(writegate(db, "jobs", "list", "--format", "json").stdout)
    assert [(j["kind"], j["state"], j["done"], j["total"]) for j in listed] == [
        ("retain", "completed", 1, 1)
    ]
    assert listed[0]["outcome"] == done


def test_a_retention_reads_what_to_forget_once_before_it_forgets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once for the job's total, once in the forgetting's transaction: each read is a pass
    over the log's superseded values, so a third (a dry run first) doubled a long log's wait."""
    db = expired_log(tmp_path)
    passes: list[int] = []
    read = retention._Finder.__call__

    def counted(self: Any, conn: Any) -> Any:
        passes.append(1)
        return read(self, conn)

    monkeypatch.setattr(retention._Finder, "__call__", counted)
    done = CliRunner().invoke(cli, ["--db", str(db), "retain", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["values"] == 1
    assert len(passes) == 2
