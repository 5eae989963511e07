"""``writegate migrate DEST`` as an operator runs it: the new log's head on the last line
(or the result as JSON), a refusal as one line and exit 1."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import yaml

from tests.cli.conftest import writegate
from tests.conftest import FIXTURES


def _log(tmp_path: Path) -> Path:
    """Ada written while Person was not personal, then Person declared personal."""
    plain = yaml.safe_load((FIXTURES / "personal_schema.yaml").read_text())
    plain["nodes"]["Person"].pop("personal")
    plain["nodes"]["Person"]["properties"]["email"].pop("personal")
    (tmp_path / "plain.yaml").write_text(yaml.safe_dump(plain))
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(tmp_path / "plain.yaml"))
    writegate(db, "write", "node", "Person:name=Ada", "-p", "email=ada@mail",
              "--source", "hr.csv", "--method", "parsed")  # fmt: skip
    writegate(db, "schema", "publish", str(FIXTURES / "personal_schema.yaml"))
    return db


def test_migrate_prints_the_new_head_and_the_new_log_verifies(tmp_path: Path) -> None:
    db = _log(tmp_path)
    done = writegate(db, "migrate", str(tmp_path / "sealed.db"))
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"migrated {db} to ")
    assert "1 personal nodes named by pseudonym" in lines[0]
    assert lines[-1] == writegate(tmp_path / "sealed.db", "verify", "--anchor").stdout.split()[-1]
    with sqlite3.connect(tmp_path / "sealed.db") as conn:
        stored = conn.execute("SELECT streams, payload, request FROM events").fetchall()
    assert "Ada" not in str(stored)
    assert "Person~" in str(stored)


def test_migrate_answers_its_result_as_json(tmp_path: Path) -> None:
    db = _log(tmp_path)
    result = json.loads(writegate(db, "migrate", str(tmp_path / "s.db"), "--json").stdout)
    assert (result["status"], result["resealed"], result["from_head_seq"]) == ("ok", 1, 3)


def test_migrate_into_a_file_that_exists_is_refused_in_one_line(tmp_path: Path) -> None:
    db = _log(tmp_path)
    refused = writegate(db, "migrate", str(db), code=1)
    assert refused.stderr.count("\n") == 1
    assert "exists: migrate into a new file" in refused.stderr
