"""Every read command takes ``--format`` (issue 10, defect 7: the README said so, and
``verify``, ``status`` and ``schema show`` did not), and its JSON is one parseable answer."""

from __future__ import annotations

import importlib
import json
import subprocess
from pathlib import Path

import click
import pytest

from tests.console import run as writegate_run
from tests.readme import section
from writegate.cli.main import COMMANDS

READ_COMMANDS = (
    "log",
    "verify",
    "report",
    "status",
    "search",
    "neighbors",
    "path",
    "show node",
    "audit node",
    "audit relationship",
    "audit agent",
    "audit source",
    "audit method",
    "audit conflicts",
    "audit duplicates",
    "schema show",
    "schema diff",
    "review list",
    "review show",
)


def command(path: str) -> click.Command:
    name, *rest = path.split()
    module, attribute = COMMANDS[name][0].split(":")
    found: click.Command = getattr(importlib.import_module(f"writegate.cli.{module}"), attribute)
    for part in rest:
        assert isinstance(found, click.Group)
        found = found.commands[part]
    return found


@pytest.mark.parametrize("path", READ_COMMANDS)
def test_every_read_command_takes_format(path: str) -> None:
    options = {opt for param in command(path).params for opt in getattr(param, "opts", [])}
    assert "--format" in options, path


def test_the_readme_names_the_read_commands_with_format() -> None:
    claim = section("## Auditing").strip().split("\n\n", 1)[0]
    for path in READ_COMMANDS:
        assert f"`{path}" in claim, path


def run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return writegate_run(["--db", str(db), *args])


def test_verify_status_and_schema_show_answer_in_json(history: Path) -> None:
    verified = json.loads(run(history, "verify", "--format", "json").stdout)
    assert verified["ok"] is True
    assert [c["name"] for c in verified["checks"]][:4] == [
        "hash chain",
        "append-only triggers",
        "history index",
        "state read model",
    ]
    assert verified["head_seq"] > 0
    assert len(verified["head_hash"]) == 64
    status = [
        json.loads(line) for line in run(history, "status", "--format", "jsonl").stdout.splitlines()
    ]
    assert status[0]["name"] == "state"
    assert status[0]["lag"] == 0
    shown = json.loads(run(history, "schema", "show", "--format", "json").stdout)
    assert shown["version"].startswith("sha256:")
    assert "Person" in shown["document"]["nodes"]


TABLES = (
    ("log",),
    ("report",),
    ("status",),
    ("search", "Alice"),
    ("neighbors", "Person", "name=Alice"),
    ("show", "node", "Person", "name=Alice"),
    ("audit", "node", "Person", "name=Alice"),
    ("audit", "agent", "agent-test"),
    ("audit", "conflicts"),
    ("schema", "show"),
    ("review", "list"),
)


@pytest.mark.parametrize("args", TABLES, ids=" ".join)
def test_tables_fit_the_terminal_and_show_no_python(history: Path, args: tuple[str, ...]) -> None:
    out = writegate_run(["--db", str(history), *args], env={"COLUMNS": "60"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines
    assert max(len(line) for line in lines) <= 60, out.stdout
    for repr_ in ("None", "['", "{'"):
        assert repr_ not in out.stdout, out.stdout


def test_the_reports_histogram_draws_bars(history: Path) -> None:
    report = writegate_run(["--db", str(history), "report"]).stdout
    assert "█" in report.split("onfidence", 1)[1]
