"""``--format``'s help says exactly the formats each command takes (it promised ``jsonl`` to
commands that refuse it); ``status --format json``, ``--as-of now``, counts in words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from tests.cli.conftest import writegate
from tests.cli.test_read_formats import READ_COMMANDS, command
from tests.conftest import AGENT, SEED_SCHEMA, person
from writegate.cli.main import COMMANDS, load_command
from writegate.gate import Gate

FORMATS = ("table", "json", "jsonl", "markdown")


@pytest.mark.parametrize("path", READ_COMMANDS)
def test_the_help_names_exactly_the_formats_taken(path: str) -> None:
    [option] = [p for p in command(path).params if "--format" in getattr(p, "opts", [])]
    assert isinstance(option, click.Option)
    assert isinstance(option.type, click.Choice)
    said = set(re.findall(r"\b(" + "|".join(FORMATS) + r")\b", option.help or ""))
    assert said == set(option.type.choices), (path, option.help)


def test_status_answers_one_json_document(history: Path) -> None:
    shown = json.loads(writegate(history, "status", "--format", "json").stdout)
    assert shown["head"] > 0
    assert shown["projections"][0] | {"store": None} == {
        "name": "state",
        "store": None,
        "checkpoint": shown["head"],
        "head": shown["head"],
        "lag": 0,
        "error": None,
    }
    lines = writegate(history, "status", "--json").stdout.splitlines()  # still jsonl
    assert json.loads(lines[0])["name"] == "state"


def test_show_node_takes_now(history: Path) -> None:
    now = json.loads(
        writegate(
            history, "show", "node", "Person", "name=Alice", "--as-of", "now", "--format", "json"
        ).stdout
    )
    default = json.loads(
        writegate(history, "show", "node", "Person", "name=Alice", "--format", "json").stdout
    )
    assert now.pop("as_of") <= default.pop("as_of")  # "now" as it was run, first
    assert now == default
    bad = writegate(history, "show", "node", "Person", "name=Alice", "--as-of", "soon", code=2)
    assert "'soon' is not an ISO 8601 time (or now)" in bad.stderr


def test_one_write_is_one_write(db_path: Path) -> None:
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(actor=AGENT, **person("Ada"))
    report = writegate(db_path, "report", "--format", "markdown").stdout
    assert "1 write, mean" in report
    assert "1 writes" not in report
    agent = writegate(db_path, "audit", "agent", "agent-test").stdout
    assert "1 event (" in agent


def _commands() -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name in COMMANDS:
        top = load_command(name)
        found.append((name, top))
        if isinstance(top, click.Group):
            found += [(f"{name} {sub}", each) for sub, each in top.commands.items()]
    return found


def test_json_means_one_thing_everywhere() -> None:
    """``--json`` is machine output, one JSON value a line: ``--format jsonl`` where the
    command lists (an item a line), else ``--format json`` (its one result, one line)."""
    said = {}
    for path, each in _commands():
        options = {o: p for p in each.params for o in getattr(p, "opts", [])}
        if "--json" not in options:
            continue
        chosen = options["--format"].type
        assert isinstance(chosen, click.Choice), path
        meant = "jsonl" if "jsonl" in chosen.choices else "json"
        said[path] = options["--json"].help
        assert said[path] == f"The same as --format {meant}.", path
    assert {"write node", "merge", "log", "report", "import mcp-memory"} <= set(said)
