"""``forget`` brings every configured projection along before it answers (issue 40, defect 2):
afterwards no file under the log's folder — the log, its ``-wal``, a JSONL snapshot in
either format and its model, a PROV-O file — holds a byte of the person, whatever the history
held (a sealed observation, a refused write, a refused retry). A projection it cannot reach
is named in one line and the exit is non-zero; ``verify`` fails while a projection has not
let go of a forgotten subject. On each backend: a PostgreSQL log's own files are read as well."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.cli.test_retain_cli import expire_at
from tests.conftest import FIXTURES
from tests.personal import stored_bytes
from tests.server.harness import free_port
from writegate.gate import Gate

SCHEMA = FIXTURES / "personal_schema.yaml"
CLAIM = ("--source", "hr.csv", "--method", "parsed")


def files_holding(folder: Path, needle: str) -> list[str]:
    """Every file under ``folder`` whose bytes hold ``needle``."""
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and needle.encode() in path.read_bytes()
    )


def person_log(
    db: str | Path, tmp_path: Path, observations: bool, projections: str
) -> tuple[str | Path, Path, str]:
    """A log at ``db`` of one Person (her write cites an observation of her when observations
    are personal), a refused write of her, and ``projections`` configured and replayed."""
    marker = f"MARK{os.urandom(6).hex()}"
    schema = tmp_path / "schema.yaml"
    schema.write_text(
        ("personal_observations: true\n" if observations else "") + SCHEMA.read_text()
    )
    toml = tmp_path / "writegate.toml"
    toml.write_text(projections.format(folder=tmp_path))
    writegate(db, "init", "--schema", str(schema))
    cited: tuple[str, ...] = ()
    if observations:
        text = f"{marker} wrote from {marker}@example.org"
        observed = writegate(db, "observe", text, "--source", "mail", "--method", "parsed")
        cited = ("--observation", observed.stdout.strip())
    person = (f"Person:name={marker}", "-p", f"email={marker}@example.org", *CLAIM)
    writegate(db, "write", "node", *person, "--idempotency-key", "hr-1", *cited)
    writegate(db, "write", "node", *person, "-p", "shoe=41", code=1)  # refused: no such property
    writegate(db, "write", "node", "Company:name=Initech", *CLAIM)
    for name in ("snapshot", "memorymesh", "prov"):
        if f"[projections.{name}]" in projections:
            writegate(db, "--config", str(toml), "replay", name)
    return db, toml, marker


FILES = """
[projections.snapshot]
kind = "jsonl"
path = "{folder}/graph.jsonl"

[projections.memorymesh]
kind = "jsonl"
path = "{folder}/memory.jsonl"
format = "memorymesh"

[projections.prov]
kind = "prov"
path = "{folder}/prov.nt"
"""


@pytest.mark.parametrize("observations", [True, False], ids=["personal-observations", "plain"])
def test_forget_leaves_no_byte_of_the_person_in_any_file(
    any_db: str | Path, tmp_path: Path, observations: bool, request: pytest.FixtureRequest
) -> None:
    db, toml, marker = person_log(any_db, tmp_path, observations, FILES)
    assert set(files_holding(tmp_path, marker)) >= {"graph.jsonl", "memory.jsonl", "prov.nt"}
    writegate(db, "--config", str(toml), "forget", f"Person:name={marker}")
    person = (f"Person:name={marker}", "-p", f"email={marker}@example.org", *CLAIM)
    writegate(db, "write", "node", *person, "--idempotency-key", "hr-1", code=1)  # a retry
    writegate(db, "--config", str(toml), "forget", f"Person:name={marker}")  # its refusal
    assert files_holding(tmp_path, marker) == []
    assert marker.encode() not in stored_bytes(db, request)
    assert "Initech" in (tmp_path / "graph.jsonl").read_text()  # the rest is still there
    writegate(db, "--config", str(toml), "verify")


def test_forget_names_the_projection_it_cannot_reach_and_exits_non_zero(
    any_db: str | Path, tmp_path: Path
) -> None:
    down = f"bolt://127.0.0.1:{free_port()}"
    config = FILES + f'\n[projections.graph]\nkind = "graph"\nuri = "{down}"\nretry_seconds = 0\n'
    db, toml, marker = person_log(any_db, tmp_path, False, config)
    done = writegate(db, "--config", str(toml), "forget", f"Person:name={marker}", code=1)
    assert done.stdout.startswith("forgot ")  # the log let go: said, not hidden by the error
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: graph: ")
    assert "may still hold the forgotten values" in line
    assert files_holding(tmp_path, marker) == []  # the others were brought along regardless


def test_verify_fails_while_a_projection_holds_a_forgotten_subject(
    any_db: str | Path, tmp_path: Path
) -> None:
    db, toml, marker = person_log(any_db, tmp_path, False, FILES)
    with Gate.open(db) as gate:  # the Python API forgets in the log alone
        gate.forget("Person", {"name": marker}, reason="asked")
    failed = writegate(db, "--config", str(toml), "verify", code=1)
    assert "FAIL  forgotten values in projections: memorymesh (at seq 3)" in failed.stdout
    assert "prov (at seq 3)" in failed.stdout
    assert "snapshot (at seq 3)" in failed.stdout
    assert failed.stderr.startswith("error: forgotten values in projections: ")
    for name in ("snapshot", "memorymesh", "prov"):
        writegate(db, "--config", str(toml), "replay", name)
    assert files_holding(tmp_path, marker) == []
    assert (
        "ok    forgotten values in projections"
        in writegate(db, "--config", str(toml), "verify").stdout
    )


def test_retain_brings_every_projection_along(any_db: str | Path, tmp_path: Path) -> None:
    db = any_db
    expire_at(db)  # Ada's old email expired years ago
    toml = tmp_path / "writegate.toml"
    toml.write_text(FILES.format(folder=tmp_path))
    for name in ("snapshot", "memorymesh", "prov"):
        writegate(db, "--config", str(toml), "replay", name)
    assert "old@mail" in (tmp_path / "prov.nt").read_text()  # PROV-O keeps each write's values
    writegate(db, "--config", str(toml), "retain")
    assert files_holding(tmp_path, "old@mail") == []
    assert "new@mail" in (tmp_path / "graph.jsonl").read_text()
    writegate(db, "--config", str(toml), "verify")
