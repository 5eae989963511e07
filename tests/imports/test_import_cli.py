"""``writegate schema import-memorymesh`` and ``writegate import`` as an operator runs them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import FIXTURES
from tests.server.harness import WRITEGATE

MESH = FIXTURES / "memorymesh"


def run(db: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [WRITEGATE, "--db", str(db), "--as", "migrator", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == code, done.stderr
    return done


def test_memorymesh_migration(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    run(db, "init")
    converted = tmp_path / "schema.yaml"
    run(db, "schema", "import-memorymesh", str(MESH), "-o", str(converted))
    assert "current_location" in converted.read_text()
    published = json.loads(run(db, "schema", "import-memorymesh", str(MESH)).stdout)
    assert published["status"] == "published"

    args = ("import", "memorymesh", str(MESH / "memory.jsonl"), "--method", "parsed")
    rehearsal = run(db, *args, "--dry-run", "--json")
    real = run(db, *args, "--json")
    first, second = json.loads(rehearsal.stdout), json.loads(real.stdout)
    assert first.pop("dry_run") is True
    assert second.pop("dry_run") is False
    assert first == second
    assert second["accepted"] == 6
    again = json.loads(run(db, *args, "--json").stdout)
    assert again["events_appended"] == 0

    human = run(db, *args)
    assert "accepted 6 (remapped 4), rejected 2, malformed 1; wrote 0 events" in human.stdout
    assert "line 8: MALFORMED_LINE" in human.stderr
    assert "line 3: SCHEMA_ENUM_VIOLATION" in human.stderr
    trail = json.loads(run(db, "audit", "node", "npc", "name=Gandalf", "--format", "json").stdout)
    assert [(e["agent"], e["source"], e["extraction_method"]) for e in trail["entries"]] == [
        ("operator:migrator", "memory.jsonl", "parsed")
    ]


def test_import_of_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    out = run(
        tmp_path / "m.db",
        "import",
        "mcp-memory",
        str(tmp_path / "nope.jsonl"),
        "--method",
        "llm",
        code=2,
    )
    assert "does not exist" in out.stderr
