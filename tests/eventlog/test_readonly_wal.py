"""A copy of a live log on read-only media: the ``-wal`` beside it holds commits, the
``-shm`` is missing and cannot be made. SQLite then refuses ``mode=ro``, and opening it
``immutable`` would ignore the WAL — reading history without its newest events, silently.
The log must read every commit (or refuse in one line), never stale data.

The media is a real read-only bind mount (``unshare -m``: tests run as root, for whom
permission bits stop no write)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA, person
from tests.server.harness import WRITEGATE
from writegate.gate import Gate

WRITES = 40


@pytest.fixture
def copied_live(tmp_path: Path) -> Path:
    """A folder holding ``log.db`` and ``log.db-wal`` copied while the log was open, so the
    newest events are only in the WAL; no ``-shm``."""
    live = tmp_path / "live" / "log.db"
    live.parent.mkdir()
    src = tmp_path / "src"
    src.mkdir()
    with Gate.open(live) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for i in range(WRITES):
            gate.write_node(**person(f"P{i}"))
        assert Path(f"{live}-wal").stat().st_size > 32  # commits in the WAL, not in the file
        shutil.copy(live, src / "log.db")
        shutil.copy(f"{live}-wal", src / "log.db-wal")
    return src


def on_read_only_media(src: Path, mount: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``writegate --db MOUNT/log.db ARGS`` with ``src`` bind-mounted read-only at ``mount``."""
    mount.mkdir()
    script = 'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && shift 2 && exec "$@"'
    command = [WRITEGATE, "--db", str(mount / "log.db"), *args]
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", str(src), str(mount), *command],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_mount_is_read_only(copied_live: Path, tmp_path: Path) -> None:
    """The premise: nothing (root included) can create the ``-shm`` there."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    script = 'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && touch "$2/log.db-shm"'
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", str(copied_live), str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "Read-only file system" in done.stderr


def test_reads_see_the_commits_in_the_wal(copied_live: Path, tmp_path: Path) -> None:
    out = on_read_only_media(copied_live, tmp_path / "mnt", "log", "--format", "jsonl")
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(events) == 1 + WRITES  # the schema and every write, the WAL's included
    assert events[-1]["seq"] == 1 + WRITES
    assert out.stderr.startswith(f"note: {tmp_path / 'mnt' / 'log.db'} is on read-only media")
    assert out.stderr.count("\n") == 1  # said once
    assert sorted(p.name for p in copied_live.iterdir()) == ["log.db", "log.db-wal"]


def test_verify_checks_the_whole_history(copied_live: Path, tmp_path: Path) -> None:
    out = on_read_only_media(copied_live, tmp_path / "mnt", "verify")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"verified up to seq {1 + WRITES}" in out.stdout


def test_no_room_for_the_private_copy_is_one_line(copied_live: Path, tmp_path: Path) -> None:
    """The copy cannot be made (its temporary folder is full): one line naming the log and
    what failed, no traceback, and no folder left behind."""
    mount, full = tmp_path / "mnt", tmp_path / "tmp"
    mount.mkdir()
    full.mkdir()
    script = (
        'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && '
        'mount -t tmpfs -o size=8k tmpfs "$3" && shift 3 && '
        '"$@"; code=$?; ls -A "$TMPDIR"; exit $code'
    )
    folders = [str(copied_live), str(mount), str(full)]
    command = [WRITEGATE, "--db", str(mount / "log.db"), "log"]
    out = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", *folders, *command],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "TMPDIR": str(full)},
    )
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"error: {mount / 'log.db'}: "), out.stderr
    assert "private copy" in out.stderr, out.stderr
    assert out.stdout == ""  # the temporary folder holds nothing
