"""A replay onto a full disk (a real one: a small tmpfs this test mounts) fails in one line
naming the projection and the filesystem, keeps the files and checkpoints as they were, and
the next replay, with room again, finishes the job."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import write_history, writegate
from tests.conftest import person
from writegate.gate import Gate
from writegate.projections.contract import ProjectionError
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.runner import replay


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs mounted for the test (the tests run as root), unmounted after."""
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(disk: Path) -> Path:
    """Take every free block with one file; the file (remove it to make room again)."""
    filler = disk / "filler"
    room = os.statvfs(disk)
    with open(filler, "wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, room.f_bavail * room.f_frsize)
    assert os.statvfs(disk).f_bavail == 0
    return filler


def files(disk: Path) -> dict[str, bytes]:
    """The projections' files (not SQLite's own -wal and -shm beside the JSONL model, which
    it makes and empties as it opens the model)."""
    kept = [p for p in sorted(disk.iterdir()) if not p.name.endswith(("filler", "-wal", "-shm"))]
    return {p.name: p.read_bytes() for p in kept}


@pytest.mark.parametrize("name", ["snapshot", "provenance"])
def test_a_replay_onto_a_full_disk_is_one_line_and_keeps_every_file(
    tmp_path: Path, small_disk: Path, name: str
) -> None:
    db = write_history(tmp_path / "log.db")
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        f'[projections.snapshot]\nkind = "jsonl"\npath = "{small_disk / "graph.jsonl"}"\n\n'
        f'[projections.provenance]\nkind = "prov"\npath = "{small_disk / "provenance.nt"}"\n'
    )
    writegate(db, "--config", str(toml), "replay", name)
    with Gate.open(db) as gate:
        for n in range(60):
            assert gate.write_node(**person(f"Person {n}")).status == "written"
    filler = fill(small_disk)
    before = files(small_disk)

    full = writegate(db, "--config", str(toml), "replay", name, code=1)
    error = full.stderr.splitlines()[-1]
    assert "Traceback" not in full.stderr
    assert error.startswith(f"error: {name}: cannot write {small_disk}/"), full.stderr
    assert f"the disk is full (the filesystem mounted at {small_disk})" in error
    assert files(small_disk) == before  # files and checkpoints as they were

    filler.unlink()
    writegate(db, "--config", str(toml), "replay", name)
    writegate(db, "--config", str(toml), "verify")
    status = writegate(db, "--config", str(toml), "status", "--format", "json")
    assert f'"name": "{name}", "store"' in status.stdout


def test_a_disk_that_fills_during_a_jsonl_replay_leaves_the_model_at_its_checkpoint(
    tmp_path: Path, small_disk: Path
) -> None:
    """The model open (its -shm made) when the disk fills: the commit SQLite refuses is rolled
    back by SQLite itself, and said once (not 'cannot rollback - no transaction is active')."""
    db = write_history(tmp_path / "log.db")
    with Gate.open(db) as gate:
        projector = JsonlProjector(small_disk / "graph.jsonl", gate.log, "snapshot")
        replay(gate.log, projector)
        checkpoint = projector.checkpoint()
        for n in range(200):
            assert gate.write_node(**person(f"Person {n}")).status == "written"
        filler = fill(small_disk)
        with pytest.raises(ProjectionError) as refused:
            replay(gate.log, projector, batch=50)
        assert str(refused.value).startswith(f"snapshot: cannot write {small_disk}/graph.jsonl")
        assert "the disk is full" in str(refused.value)
        assert projector.checkpoint() == checkpoint
        filler.unlink()
        replay(gate.log, projector)
        assert projector.checkpoint() == gate.log.head()[0]
        projector.close()
