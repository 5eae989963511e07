"""Schema files from the CLI: every problem in a file is reported, each on its own line with
its file:line:column; and ``schema diff`` says changes in words, never Python reprs."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import EXAMPLE_SCHEMA
from tests.console import run as writegate_run


def run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return writegate_run(["--db", str(db), *args])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "log.db"
    assert run(path, "init", "--schema", str(EXAMPLE_SCHEMA)).returncode == 0
    return path


def test_every_problem_is_a_line_of_its_own(db: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "nodes:\n"
        "  Person:\n"
        "    merge_keys: [name]\n"
        "    required: [email]\n"
        "    colour: red\n"
        "    properties: {name: {type: strin}}\n"
    )
    expected = [
        f"{path}:6:25: nodes.Person.properties.name.type: Input should be 'string', "
        "'integer', 'number', 'boolean' or 'array'",
        f"{path}:5:5: nodes.Person.colour: unknown key 'colour'",
        f"{path}:4:16: nodes.Person.required.0: 'email' is not a declared property of Person "
        "(declare it under properties, or as a merge key)",
    ]
    for command, prefix in (("diff", "error: "), ("publish", "error: SCHEMA_INVALID: ")):
        out = run(db, "schema", command, str(path))
        assert out.returncode == 1
        assert out.stderr.splitlines() == [prefix + line for line in expected], command
    fresh = tmp_path / "fresh.db"
    refused = run(fresh, "init", "--schema", str(path))
    assert refused.stderr.splitlines() == ["error: SCHEMA_INVALID: " + e for e in expected]
    assert not fresh.exists()  # a bad schema creates no log


def test_a_duplicate_key_does_not_hide_the_rest(db: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "nodes:\n"
        "  Person:\n"
        "    merge_keys: [name]\n"
        "  Person:\n"
        "    merge_keys: [name]\n"
        "    required: [email]\n"
    )
    out = run(db, "schema", "diff", str(path))
    assert out.stderr.splitlines() == [
        f"error: {path}:4:3: nodes.Person: duplicate key 'Person' (first at line 2, column 3): "
        "each key once",
        f"error: {path}:6:16: nodes.Person.required.0: 'email' is not a declared property of "
        "Person (declare it under properties, or as a merge key)",
    ]


def test_the_diff_is_said_in_words(db: Path, tmp_path: Path) -> None:
    document: dict[str, Any] = yaml.safe_load(EXAMPLE_SCHEMA.read_text())
    document["nodes"]["Document"]["merge_keys"] = ["uri", "title"]
    role = document["nodes"]["Person"]["properties"]["role"]
    role["enum"] = [v for v in role["enum"] if v in ("engineer", "manager")]
    document["fallback_label"] = None
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(document))
    out = run(db, "schema", "diff", str(path))
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert "~ label Document: merge keys uri -> uri, title" in lines
    assert "~ label Person.role: enum drops designer, director, contractor" in lines
    assert "~ fallback_label: Entity -> none" in lines
    for python in ("[", "'", "None"):
        assert python not in out.stdout.split("\n", 1)[1], python
