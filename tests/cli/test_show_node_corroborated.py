"""``show node`` carries the corroborated confidence and the sources ``open`` gives (issue 42,
defect 13): a node written twice, from two sources, reads the same from both commands."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import as_json, writegate
from tests.conftest import EXAMPLE_SCHEMA


def test_show_node_says_what_open_says_of_a_corroborated_node(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    for source in ("a.md", "b.md"):
        writegate(
            db, "write", "node", "Person:name=Ada", "-p", "role=engineer",
            "--source", source, "--method", "api", "--reliability", "0.8",
        )  # fmt: skip
    [opened] = as_json(db, "open", "Person:name=Ada", "--format", "json")["nodes"]
    said = opened["provenance"]
    assert said["sources"] == ["a.md", "b.md"]
    assert said["corroborated_confidence"] > said["confidence"]
    shown = as_json(db, "show", "node", "Person:name=Ada", "--format", "json")
    assert shown["confidence"] == said["confidence"]
    assert shown["corroborated_confidence"] == said["corroborated_confidence"]
    assert shown["sources"] == said["sources"]
    table = writegate(db, "show", "node", "Person:name=Ada", env={"COLUMNS": "120"}).stdout
    assert f"corroborated confidence │ {said['corroborated_confidence']}" in table
    assert "sources                 │ a.md, b.md" in table


def test_show_node_before_the_corroboration_has_none(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    write = ("write", "node", "Person:name=Ada", "--method", "api", "--reliability", "0.8")
    writegate(db, *write, "--source", "a.md")
    first = as_json(db, "show", "node", "Person:name=Ada", "--format", "json")["as_of"]
    writegate(db, *write, "--source", "b.md")
    then = as_json(db, "show", "node", "Person:name=Ada", "--as-of", first, "--format", "json")
    assert "corroborated_confidence" not in then
    assert "sources" not in then


def test_a_corroborated_relationships_table_row_says_what_its_json_says(tmp_path: Path) -> None:
    """The relationship rows of ``neighbors`` and ``open`` showed the last write's
    confidence (0.8) where their JSON gives the corroborated one (0.96)."""
    db = tmp_path / "m.db"
    writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    for source in ("a.md", "b.md"):
        writegate(
            db, "write", "relationship", "WORKS_AT", "Person:name=Ada", "Company:name=Initech",
            "--merge-endpoints", "--source", source, "--method", "api", "--reliability", "0.8",
        )  # fmt: skip
    for command in ("neighbors", "open"):
        [edge] = as_json(db, command, "Person:name=Ada", "--format", "json")["edges"]
        said = edge["provenance"]
        assert said["corroborated_confidence"] > said["confidence"]
        table = writegate(db, command, "Person:name=Ada", env={"COLUMNS": "150"}).stdout
        [row] = [line for line in table.splitlines() if "WORKS_FOR" in line]
        assert f"│ {said['corroborated_confidence']} " in row, row
