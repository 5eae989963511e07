"""The CLI through the installed ``writegate`` console script, as an operator runs it."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_SCHEMA
from tests.console import run as writegate_run
from writegate.cli.main import COMMANDS, load_command

WRITEGATE = shutil.which("writegate") or str(Path(sys.executable).with_name("writegate"))


def run(db: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = writegate_run(["--db", str(db), "--as", "tester", *args])
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_operator_session(tmp_path: Path) -> None:
    db = tmp_path / "ops.db"
    run(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    out = run(
        db,
        "write",
        "node",
        "person:name=Ada",
        "-p",
        "age=36",
        "-p",
        'skills=["math"]',
        "--source",
        "hr.csv",
        "--method",
        "parsed",
        "--reliability",
        "1",
        "--format",
        "json",
    ).stdout
    written = json.loads(out)
    assert (written["label"], written["remapped_from"], written["confidence"]) == (
        "Person",
        ":person",
        0.85,
    )
    run(
        db,
        "write",
        "relationship",
        "WORKS_FOR",
        "Person:name=Ada",
        "Organization:name=Analytical",
        "--merge-endpoints",
        "--source",
        "hr.csv",
        "--method",
        "parsed",
    )
    events = [json.loads(line) for line in run(db, "log", "--json").stdout.splitlines()]
    assert [e["type"] for e in events] == [
        "schema.published",
        "node.written",
        "relationship.written",
    ]
    assert {e["actor"]["agent"] for e in events} == {"operator:tester"}
    assert "chain ok: 3 events" in run(db, "verify").stdout
    shown = json.loads(run(db, "schema", "show", "--json").stdout)
    assert shown["version"].startswith("sha256:")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            [
                "write",
                "node",
                "Person:name=A",
                "-p",
                "confidence=1",
                "--source",
                "s",
                "--method",
                "api",
            ],
            1,
            "error: SCHEMA_PROTECTED_FIELD:",
        ),
        (
            ["write", "node", "Person:name=A", "--source", "s", "--method", "guess"],
            1,
            "error: INVALID_EXTRACTION_METHOD:",
        ),
        (
            ["write", "node", "Person:nameA", "--source", "s", "--method", "api"],
            2,
            "error: NODE 'Person:nameA': 'nameA' is not key=value",
        ),
        (
            ["log", "--node", "Person{oops"],
            2,
            "error: --node 'Person{oops' is not Label{json keys}",
        ),
    ],
)
def test_errors_are_one_line_and_non_zero(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    db = tmp_path / "e.db"
    run(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    proc = run(db, *args, ok=False)
    assert proc.returncode == code
    assert proc.stderr.startswith(message), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "command", [("serve",), ("write", "node", "Person:name=Ada", "--source", "s", "--method", "api")]
)
def test_an_empty_file_is_not_made_a_new_log(tmp_path: Path, command: tuple[str, ...]) -> None:
    """A log truncated to nothing (a botched restore) was served as a new, empty one:
    ``serve`` and ``write`` made their tables in it, and agents wrote on."""
    empty = tmp_path / "memory.db"
    empty.touch()
    proc = run(empty, *command, ok=False)
    assert (proc.returncode, proc.stderr.splitlines()) == (
        1,
        [f"error: {empty} is empty (0 bytes), not a writegate log"],
    )
    assert empty.stat().st_size == 0


def test_missing_log_and_foreign_file(tmp_path: Path) -> None:
    proc = run(tmp_path / "absent.db", "log", ok=False)
    assert (proc.returncode, proc.stderr.strip()) == (
        1,
        f"error: no writegate log at {tmp_path / 'absent.db'} (run `writegate init`)",
    )
    foreign = tmp_path / "foreign.db"
    sqlite3.connect(foreign).execute("CREATE TABLE x (y)").connection.commit()
    proc = run(foreign, "verify", ok=False)
    assert proc.returncode == 1
    assert "not a writegate log" in proc.stderr


def test_batch_file(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    run(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    batch = tmp_path / "b.jsonl"
    batch.write_text(
        "\n".join(
            json.dumps(item)
            for item in [
                {
                    "op": "write_node",
                    "label": "Person",
                    "merge_keys": {"name": "A"},
                    "source": "f",
                    "extraction_method": "api",
                },
                {
                    "op": "write_node",
                    "label": "Person",
                    "merge_keys": {"name": "B"},
                    "source": "f",
                    "extraction_method": "api",
                },
            ]
        )
    )
    key = ("--idempotency-key", "b1", "--format", "json")
    result = json.loads(run(db, "write", "batch", str(batch), *key).stdout)
    assert len(result["results"]) == 2
    again = json.loads(run(db, "write", "batch", str(batch), *key).stdout)
    assert again == result


def test_the_command_registry_matches_each_command_it_names() -> None:
    """``writegate --help`` lists commands without importing them: its lines must stay true."""
    for name, (_, help_line) in COMMANDS.items():
        command = load_command(name)
        assert command.name in (name, f"{name}_command", f"{name}_group"), name
        assert command.get_short_help_str(limit=1000) == help_line, name


@pytest.mark.parametrize(
    "command",
    [
        ("observe", "", "--source", "s", "--method", "api"),
        ("retract", "--source", "nobody-said-this"),
        ("unretract", "r-nope"),
    ],
)
def test_a_refusal_in_text_is_one_line_on_stderr_and_nothing_on_stdout(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """These printed the refusal's JSON on stdout: ``said=$(writegate observe …)`` took it
    for an observation's id. With ``--format json`` the JSON is the answer, as before."""
    db = tmp_path / "log.db"
    run(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    refused = run(db, *command, ok=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert len(refused.stderr.splitlines()) == 1, refused.stderr
    as_json = run(db, *command, "--format", "json", ok=False)
    assert json.loads(as_json.stdout)["status"] == "rejected"


HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    "command",
    [
        ("log", "--after", HUGE),
        ("log", "--to-seq", HUGE),
        ("replay", "state", "--from-seq", HUGE),
        ("jobs", "show", HUGE),
        ("audit", "feedback", "--after", HUGE),
        ("log", "--since", "0001-01-01T00:00:00+05:00"),
        ("query", "Ada", "--as-of", "9999-12-31T23:00:00-05:00"),
        ("retract", "--source", "s", "--since", "9999-12-31T23:59:59-01:00", "--dry-run"),
        ("retract", "--source", "s", "--until", "0001-01-01T00:00:00+01:00", "--reason", "x"),
        ("log", "--agent", "\udcff"),  # the byte 0xff, as Python is given it
    ],
)
def test_a_value_past_what_the_log_holds_is_a_usage_error(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """Each was a traceback: an integer SQLite cannot hold, a time that leaves the calendar
    once in UTC, an argument that is not UTF-8."""
    db = tmp_path / "log.db"
    run(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    refused = run(db, *command, ok=False)
    assert refused.returncode == 2
    assert "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[-1].startswith(("Error: Invalid value", "error:"))
