"""A bare value on the command line reads as the schema declares its property (issue 42,
defect 7): ``-p title=1984`` was refused as an int and ``Paper:doi=10.5`` became a float.
A string-declared key or property keeps what was typed, in writes and in reads that name
the node; anything else still reads as JSON; a refusal of a value read as JSON says how to
quote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import as_json, writegate

SCHEMA = """
nodes:
  Paper:
    merge_keys: [doi]
    properties:
      doi: {type: string}
      title: {type: string}
      year: {type: integer}
      tags: {type: array, items: string}
"""
CLAIM = ("--source", "catalogue", "--method", "manual")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    schema = tmp_path / "schema.yaml"
    schema.write_text(SCHEMA)
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(schema))
    return db


def test_a_string_declared_value_keeps_what_was_typed(db: Path) -> None:
    written = as_json(db, "write", "node", "Paper:doi=10.50", "-p", "title=1984",
                      "-p", "year=1949", "-p", "pages=12", *CLAIM, "--json")  # fmt: skip
    assert written["merge_keys"] == {"doi": "10.50"}
    shown = as_json(db, "show", "node", "Paper:doi=10.50", "--json")
    assert shown["state"] == "present"
    assert shown["properties"] == {"doi": "10.50", "title": "1984", "year": 1949, "pages": 12}
    audited = writegate(db, "audit", "node", "Paper:doi=10.50", "--json").stdout
    assert [json.loads(line)["seq"] for line in audited.splitlines()] == [written["seq"]]


def test_a_value_read_as_json_where_it_does_not_fit_says_how_to_quote(db: Path) -> None:
    refused = writegate(db, "write", "node", "Paper:doi=1", "-p", "tags=5", *CLAIM, code=1)
    assert refused.stderr.startswith("error: SCHEMA_TYPE_MISMATCH: properties.tags must be")
    assert """quote one to send a string, NAME='"1984"'""" in refused.stderr
    typed = writegate(db, "write", "node", "Paper:doi=1", "-p", "year=soon", *CLAIM, code=1)
    assert "quote" not in typed.stderr  # a word where a number belongs: nothing to quote
