"""``--json`` means one thing everywhere (issue 42, defect 6): every command with a machine
format takes it, and what it prints is machine output, one JSON value a line — ``query``,
``search``, ``verify``, ``audit node``, ``show`` and ``neighbors`` used to refuse it,
``schema show --json`` printed an indented page and ``init --json`` a sentence."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click

from tests.cli.conftest import writegate
from tests.conftest import SEED_SCHEMA
from writegate.cli.main import cli


def _commands(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def _choices(command: click.Command) -> list[str]:
    formats = [p for p in command.params if isinstance(p, click.Option) and "--format" in p.opts]
    found = formats[0].type if formats else None
    return list(found.choices) if isinstance(found, click.Choice) else []


def test_every_command_with_a_machine_format_takes_json() -> None:
    lacking = [
        name
        for name, command in _commands(cli)
        if {"json", "jsonl"} & set(_choices(command))
        and not any("--json" in p.opts for p in command.params if isinstance(p, click.Option))
    ]
    assert lacking == []


def _json_lines(text: str) -> list[object]:
    lines = text.splitlines()
    assert lines, "nothing printed"
    return [json.loads(line) for line in lines]


def test_json_prints_one_json_value_a_line(history: Path, tmp_path: Path) -> None:
    for args in (
        ("query", "Alice Initech"),
        ("search", "Alice"),
        ("verify",),
        ("audit", "node", "Person:name=Alice"),
        ("show", "node", "Person:name=Alice"),
        ("neighbors", "Person:name=Alice"),
        ("schema", "show"),
        ("log", "--limit", "3"),
        ("report",),
    ):
        done = writegate(history, *args, "--json")
        assert _json_lines(done.stdout), args
    fresh = tmp_path / "fresh.db"
    (ready,) = _json_lines(writegate(fresh, "init", "--schema", str(SEED_SCHEMA), "--json").stdout)
    assert isinstance(ready, dict)
    assert ready["head_seq"] == 0
    assert ready["schema"]["status"] == "published"
    (schema,) = _json_lines(writegate(fresh, "schema", "show", "--json").stdout)
    assert isinstance(schema, dict)
    assert set(schema) == {"version", "document"}
