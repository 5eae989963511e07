"""Copies and backups after a forgetting, on SQLite and PostgreSQL: a copy continued past a
``subject.forgotten`` receipt (an earlier copy, or a backup restored and brought up to date)
forgets in itself what the original forgot — keys, values and read-model rows — so that it
is what a copy made after the forgetting is, and it verifies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import AGENT, FIXTURES
from tests.postgres import Server
from writegate.eventlog import EventLog, open_log
from writegate.eventlog.copying import copy_log
from writegate.eventlog.erasing import forgettings_after, subjects_held
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult
from writegate.gate.reads.reader import GraphReader
from writegate.projections.state import StateProjection

SCHEMA = FIXTURES / "personal_schema.yaml"


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


@pytest.fixture
def copy_at(db_path: str | Path, tmp_path: Path, request: pytest.FixtureRequest) -> str | Path:
    """Where the copy goes, on the source's backend."""
    if isinstance(db_path, Path):
        return tmp_path / "copy.db"
    server: Server = request.getfixturevalue("postgres")
    return server.create_database(f"copy_{os.urandom(4).hex()}")


@pytest.fixture
def people(db_path: str | Path) -> Iterator[tuple[Gate, str]]:
    marker = f"MARK{os.urandom(6).hex()}"
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        for name in (marker, "Ada"):
            written = gate.write_node(
                label="Person",
                merge_keys={"name": name},
                properties={"email": f"{name}@mail", "role": "engineer"},
                source="test",
                extraction_method="manual",
            )
            assert written.status == "written", written
        yield gate, marker


def _copy(source: Gate, at: str | Path) -> None:
    with open_log(at, inline=[StateProjection()]) as dest:
        copy_log(source.log, dest)


def test_a_copy_continued_past_a_forgetting_forgets_it_too(
    people: tuple[Gate, str], copy_at: str | Path
) -> None:
    gate, marker = people
    _copy(gate, copy_at)
    locator = f'Person{{"name":"{marker}"}}'
    with Gate.open(copy_at) as copy:
        assert copy.log.subject_of(locator) is not None  # the test can fail
        assert subjects_held(copy.log) == 2
        head = copy.log.head()[0]
    done = gate.forget("Person", {"name": marker}, reason="asked")
    assert isinstance(done, ForgetResult)

    _copy(gate, copy_at)
    with Gate.open(copy_at) as copy:
        assert copy.log.head() == gate.log.head()
        assert forgettings_after(copy.log, head) == 1
        assert copy.log.subject_of(locator) is None
        assert subjects_held(copy.log) == 1
        report = copy.verify()  # the read model is what a replay makes of the log now
        assert report.ok, report.checks
        assert copy.log.verify().erased == len(done.events)
        found = GraphReader(copy.log, copy.state).search_nodes(marker.lower(), 5)
        assert found.nodes == []
        ada = GraphReader(copy.log, copy.state).open_nodes(
            [{"label": "Person", "merge_keys": {"name": "Ada"}}], copy.current_schema()
        )
        assert ada.nodes[0].properties["email"] == "Ada@mail"
    if isinstance(copy_at, Path):
        wal = Path(f"{copy_at}-wal")
        raw = copy_at.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
        assert marker.encode() not in raw
        assert b"Ada@mail" in raw


def test_a_backup_says_whose_values_it_holds_and_a_restored_one_catches_up(
    tmp_path: Path,
) -> None:
    db, backup = tmp_path / "log.db", tmp_path / "backup.db"
    writegate(db, "init", "--schema", str(SCHEMA))
    writegate(db, "write", "node", "Person:name=Grace", "-p", "email=grace@mail",
              "--source", "hr.csv", "--method", "parsed")  # fmt: skip
    made = writegate(db, "backup", str(backup)).stdout
    assert "holds the personal values of 1 subject(s)" in made
    writegate(db, "forget", "Person", "name=Grace")
    caught_up = writegate(db, "copy", str(db), str(backup)).stdout
    assert "applied 1 forgetting(s) recorded since DEST's head" in caught_up
    assert b"grace@mail" not in backup.read_bytes()
    writegate(backup, "verify")
    with EventLog(backup) as log:
        assert subjects_held(log) == 0
