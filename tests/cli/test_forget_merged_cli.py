"""``writegate merge`` of two personal nodes and ``forget`` of one of them, as an operator
runs them: the forgetting's line names both nodes, and no byte of either name is left."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.conftest import writegate
from tests.conftest import FIXTURES

CLAIM = ("--source", "hr.csv", "--method", "parsed")


def test_forgetting_one_of_two_merged_people_says_it_forgot_both(tmp_path: Path) -> None:
    db = tmp_path / "people.db"
    writegate(db, "init", "--schema", str(FIXTURES / "personal_schema.yaml"))
    writegate(db, "write", "node", "Person:name=Ada Lovelace", "-p", "email=ada@x.org", *CLAIM)
    writegate(db, "write", "node", "Person:name=Ada Lovelase", "--resolution", "new", *CLAIM)
    merged = writegate(
        db, "merge", "Person:name=Ada Lovelace", "Person:name=Ada Lovelase", "--reason", "same",
        "--source", "review", "--method", "manual",
    ).stdout  # fmt: skip
    duplicate, survivor = re.findall(r"Person~[0-9a-f]{32}", merged.splitlines()[0])
    forgot = writegate(db, "forget", "Person:name=Ada Lovelase", "--reason", "asked").stdout
    assert forgot.startswith(f"forgot {duplicate} and {survivor} merged with it at seq "), forgot
    assert "2 subject keys" in forgot
    assert writegate(db, "verify").returncode == 0
    files = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("people.db"))
    assert b"Lovela" not in files
    assert b"ada@x.org" not in files
