"""``writegate schema import-memorymesh`` and ``writegate import`` as an operator runs them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import EXAMPLE_SCHEMA, FIXTURES
from tests.console import run as writegate_run

MESH = FIXTURES / "memorymesh"


def run(db: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = writegate_run(["--db", str(db), "--as", "migrator", *args])
    assert done.returncode == code, done.stderr
    return done


def test_memorymesh_migration(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    run(db, "init")
    converted = tmp_path / "schema.yaml"
    run(db, "schema", "import-memorymesh", str(MESH), "-o", str(converted))
    assert "currentLocation" in converted.read_text()  # the file's names, kept (defect E)
    published = json.loads(run(db, "schema", "import-memorymesh", str(MESH), "--json").stdout)
    assert published["status"] == "published"

    args = ("import", "memorymesh", str(MESH / "memory.jsonl"), "--method", "parsed")
    rehearsal = run(db, *args, "--dry-run", "--json", code=1)  # it has items to reject
    real = run(db, *args, "--json", code=1)
    first, second = json.loads(rehearsal.stdout), json.loads(real.stdout)
    assert first.pop("dry_run") is True
    assert second.pop("dry_run") is False
    assert first == second
    assert second["accepted"] == 7
    again = json.loads(run(db, *args, "--json", code=1).stdout)
    assert again["events_appended"] == 0

    human = run(db, *args, code=1)
    assert (
        "accepted 7 (remapped 5, resolved to existing nodes 0), rejected 2, malformed 1; wrote 0 events"
        in human.stdout
    )
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


def test_an_import_that_rejects_anything_exits_non_zero_after_its_summary(tmp_path: Path) -> None:
    """Newcomer 6: a script must be able to tell. Every item refused -> exit 1, with the
    summary printed first; a clean import -> exit 0."""
    db = tmp_path / "m.db"
    run(db, "init")
    run(db, "schema", "import-memorymesh", str(MESH))
    refused = tmp_path / "refused.jsonl"
    refused.write_text(
        '{"type":"node","name":"Bilbo","nodeType":"npc","metadata":["Role: Burglar",'
        '"Status: Active"]}\n'
    )
    clean = tmp_path / "clean.jsonl"
    clean.write_text('{"type":"node","name":"Shire","nodeType":"location","metadata":[]}\n')
    method = ("--method", "parsed")

    for flags in ((), ("--dry-run",)):
        out = run(db, "import", "memorymesh", str(refused), *method, *flags, code=1)
        assert (
            "accepted 0 (remapped 0, resolved to existing nodes 0), rejected 1, malformed 0"
            in out.stdout
        )
        assert "line 1: SCHEMA_ENUM_VIOLATION" in out.stderr
        verb = "would reject" if flags else "rejected"
        assert out.stderr.splitlines()[-1] == (
            f"error: {refused}: {verb} 1 item, 0 malformed lines of 1"
        )
    as_json = run(db, "import", "memorymesh", str(refused), *method, "--json", code=1)
    assert json.loads(as_json.stdout)["rejected"] == 1

    done = run(db, "import", "memorymesh", str(clean), *method)
    assert (
        "accepted 1 (remapped 1, resolved to existing nodes 0), rejected 0, malformed 0"
        in done.stdout
    )
    assert "error:" not in done.stderr


def test_a_memorymesh_import_whose_types_the_schema_lacks_writes_nothing(tmp_path: Path) -> None:
    """Third day 9: pasted after the README, the guide's schema import was refused and the
    data import then landed MemoryMesh's entities on the README log's fallback label. A
    MemoryMesh file comes with its schema: a node type the log's schema neither declares
    nor remaps means that schema is not there, so nothing is written and the line says
    which types and what to run."""
    db = tmp_path / "m.db"
    run(db, "init", "--schema", str(FIXTURES / "schema.yaml"))  # it has a fallback label
    head = json.loads(run(db, "status", "--json").stdout.splitlines()[0])["head"]
    args = ("import", "memorymesh", str(MESH / "memory.jsonl"), "--method", "parsed")
    out = run(db, *args, code=2)  # as for a file that is not there: no job is started
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ")
    assert "Traceback" not in out.stderr
    assert "SCHEMA_UNKNOWN_LABEL" in last
    assert "npc" in last
    assert "writegate schema import-memorymesh" in last
    assert json.loads(run(db, "status", "--json").stdout.splitlines()[0])["head"] == head
    assert "0 jobs" in run(db, "jobs").stdout


def test_a_line_that_is_not_utf8_is_one_malformed_line_and_the_rest_imports(
    tmp_path: Path,
) -> None:
    """One byte of Latin-1 ("Caf\\xe9") refused the whole file, naming no line; with
    ``--dry-run`` a traceback."""
    db = tmp_path / "log.db"
    run(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    memory = tmp_path / "mem.jsonl"
    memory.write_bytes(
        b'{"type":"entity","name":"Ada","entityType":"Person","observations":[]}\n'
        b'{"type":"entity","name":"Caf\xe9","entityType":"Organization","observations":[]}\n'
    )
    args = ("import", "mcp-memory", str(memory), "--method", "llm")
    for rehearsal in (("--dry-run",), ()):
        done = run(db, *args, *rehearsal, code=1)
        assert "Traceback" not in done.stderr
        assert "line 2: MALFORMED_LINE: not UTF-8 (byte 29 of the line)" in done.stderr
        assert "accepted 1" in done.stdout
