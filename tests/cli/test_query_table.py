"""The query table's confidence is the fact's, corroboration included, as the JSON answer's
(issue 42: the table showed the last write's confidence before corroboration)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import as_json, writegate
from tests.conftest import FIXTURES

WORKS = ("WORKS_FOR", "Person:name=Ada", "Organization:name=Initech", "--merge-endpoints")


def test_the_query_table_shows_the_corroborated_confidence(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(FIXTURES / "schema.yaml"))
    writegate(db, "write", "relationship", *WORKS, "--source", "chat:1", "--method", "llm")
    writegate(db, "write", "relationship", *WORKS, "--source", "hr.csv", "--method", "parsed")
    (triplet,) = as_json(db, "query", "Ada Initech", "--format", "json")["triplets"]
    said = triplet["provenance"]
    assert said["corroboratedConfidence"] != said["confidence"]
    table = writegate(db, "query", "Ada Initech", env={"COLUMNS": ""}).stdout
    (row,) = [line for line in table.splitlines() if "WORKS_FOR" in line]
    assert row.split("│")[-2].strip() == str(said["corroboratedConfidence"])
