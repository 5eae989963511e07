"""Tables fit an 80-column terminal without breaking an id, a node's name or a time (issue
42): a table whose whole cells cannot sit side by side prints its rows one after another;
piped, a table is as wide as its cells, one row a line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import FIXTURES

NARROW = {"COLUMNS": "80"}
PIPED = {"COLUMNS": ""}  # no width given: stdout is a pipe
LONG = "Person:name=Augusta Ada King Countess of Lovelace"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo's writes, a long name and two replays (the tests only read it)."""
    tmp_path = tmp_path_factory.mktemp("tables")
    db = tmp_path / "log.db"
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        f'[projections.snapshot]\nkind = "jsonl"\npath = "{tmp_path / "graph.jsonl"}"\n'
        f'[projections.provenance]\nkind = "prov"\npath = "{tmp_path / "provenance.nt"}"\n'
    )
    writegate(db, "init", "--schema", str(FIXTURES / "schema.yaml"))
    writegate(db, "write", "batch", str(FIXTURES / "demo_writes.jsonl"))
    writegate(db, "write", "node", LONG, "--source", "hr.csv", "--method", "parsed")
    for name in ("snapshot", "provenance"):
        writegate(db, "--config", str(toml), "replay", name)
    return db, toml


def _whole(out: str, *words: str) -> None:
    assert all(len(line) <= 80 for line in out.splitlines()), out
    for word in words:
        assert any(word in line for line in out.splitlines()), (word, out)


def test_narrow_tables_keep_every_id_whole(demo: tuple[Path, Path]) -> None:
    db, toml = demo
    jobs = writegate(db, "jobs", env=NARROW).stdout
    _whole(jobs, "operator:", "provenance", "snapshot", "completed")
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", jobs)  # a time, whole, to the second
    status = writegate(db, "--config", str(toml), "status", env=NARROW).stdout
    _whole(status, "provenance", "checkpoint")
    trail = writegate(db, "audit", "node", LONG, env=NARROW).stdout
    _whole(trail, "hr.csv / parsed")
    found = writegate(db, "query", "Lovelace", env=NARROW).stdout
    _whole(found, LONG)


def test_a_table_too_wide_for_the_terminal_prints_its_rows_one_after_another(
    demo: tuple[Path, Path],
) -> None:
    db, _ = demo
    jobs = writegate(db, "jobs", env=NARROW).stdout
    assert "── 1 of 2 ──" in jobs
    assert any(line.split() == ["kind", "replay"] for line in jobs.splitlines())


def test_a_piped_table_is_one_row_a_line(demo: tuple[Path, Path]) -> None:
    db, _ = demo
    jobs = writegate(db, "jobs", env=PIPED).stdout
    rows = [line for line in jobs.splitlines() if "replay" in line]
    assert len(rows) == 2
    assert all("operator:" in row and "events/s" in row for row in rows)


def test_a_name_with_brackets_is_printed_as_written(tmp_path: Path) -> None:
    """A cell is text, never markup: ``[bold]`` in a node's name is printed, not obeyed."""
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(FIXTURES / "schema.yaml"))
    name = "Person:name=[bold]Eve[/bold]"
    writegate(db, "write", "node", name, "--source", "hr.csv", "--method", "parsed")
    assert '"[bold]Eve[/bold]"} (exists)' in writegate(db, "audit", "node", name, env=PIPED).stdout
