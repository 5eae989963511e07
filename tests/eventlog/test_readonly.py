"""A log opened read-only is read exactly as it is and never written (issue 10, point 5)."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA, person
from writegate.eventlog import EventLog, EventLogError
from writegate.gate import Gate


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def read_only_copy(tmp_path: Path) -> Path:
    live = tmp_path / "live.db"
    with Gate.open(live) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.refresh_schema_cache()
        gate.write_node(**person("Ada"))
        gate.write_node(**person(merge_keys={"nope": 1}))  # a refusal: the table exists
    copy = tmp_path / "audit" / "copy.db"
    copy.parent.mkdir()
    shutil.copy(live, copy)  # closed cleanly, so the WAL is checkpointed into the file
    copy.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return copy


def test_reads_work_and_the_file_is_untouched(read_only_copy: Path) -> None:
    before = _digest(read_only_copy)
    with Gate.open(read_only_copy, readonly=True) as gate:
        assert gate.log.head()[0] == 2
        assert gate.verify().ok
        assert [e.type for e in gate.log.iter_events()] == ["schema.published", "node.written"]
        assert len(list(gate.rejections.read())) == 1
        assert gate.current_schema().version.startswith("sha256:")
    assert _digest(read_only_copy) == before


def test_writes_are_refused_without_touching_the_file(read_only_copy: Path) -> None:
    before = _digest(read_only_copy)
    with Gate.open(read_only_copy, readonly=True) as gate, pytest.raises(EventLogError):
        gate.write_node(**person("Grace"))
    assert _digest(read_only_copy) == before


def test_a_missing_or_foreign_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.db"):
        EventLog(tmp_path / "nope.db", readonly=True)
    foreign = tmp_path / "notes.db"
    foreign.write_bytes(os.urandom(4096))
    with pytest.raises(EventLogError, match=r"notes\.db"):
        EventLog(foreign, readonly=True)
    with pytest.raises(EventLogError, match=r"notes\.db"):
        EventLog(foreign)
