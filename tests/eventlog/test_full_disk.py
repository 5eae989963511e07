"""The log on a disk that fills up: a write that cannot be committed is a retryable refusal
(``LOG_UNAVAILABLE``, its cause in ``details``) with nothing appended, never an internal
error; once space is freed, the retry under the same idempotency key lands exactly once. A
backup that runs out of room leaves nothing behind.

The disk is a real tmpfs the test mounts (tests run as root) and unmounts afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.cli.conftest import writegate
from tests.conftest import AGENT, SEED_SCHEMA, person
from tests.postgres import SUPERUSER, Server
from tests.server.harness import stdio_agent
from writegate.eventlog import EventLog
from writegate.gate import Gate, Rejected, WriteNodeResult

BIO = "x" * 4000  # a write's worth of bytes: a few of them fill what the filler leaves


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def tmpfs(disk: Path, size: str = "2m") -> Iterator[Path]:
    """A filesystem of ``size`` of its own mounted at ``disk``, unmounted afterwards."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "--lazy", str(disk)], check=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    with tmpfs(disk) as mounted:
        yield mounted


def fill(disk: Path, leave: int = 0) -> Path:
    """Take the disk's free space down to about ``leave`` bytes; the file holding it."""
    filler = disk / "filler"
    with filler.open("ab") as out:
        while _free(disk) > leave:
            try:
                out.write(b"\0" * 4096)
                out.flush()
            except OSError:  # full before the last block
                break
    return filler


def _free(disk: Path) -> int:
    stat = os.statvfs(disk)
    return stat.f_bavail * stat.f_frsize


def head(db: Path) -> int:
    with EventLog(db, readonly=True) as log:
        return log.head()[0]


def published(db: Path) -> Path:
    with Gate.open(db) as gate:
        assert gate.publish_schema(SEED_SCHEMA).status == "published"
    return db


def write(i: int) -> dict[str, Any]:
    return {**person(f"P{i}", properties={"bio": BIO}), "idempotency_key": f"key-{i}"}


@pytest.mark.anyio
async def test_a_full_disk_is_a_retryable_refusal_over_stdio(
    small_disk: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    db = published(small_disk / "log.db")
    async with stdio_agent(db) as agent:
        landed = (await agent.call("write_node", write(0))).data["seq"]
        filler = fill(small_disk, leave=64 * 1024)
        for i in range(1, 40):  # until the disk is full
            out = await agent.call("write_node", write(i))
            if out.is_error:
                break
            landed = out.data["seq"]
        assert out.data["error_code"] == "LOG_UNAVAILABLE", out.data
        assert "full" in out.data["details"]["cause"], out.data
        assert str(db) in out.data["message"]
        assert head(db) == landed  # nothing of the refused write was appended

        filler.unlink()
        again = await agent.call("write_node", write(i))
        assert again.data["status"] == "written", again.data
        assert again.data["seq"] == landed + 1
        once_more = await agent.call("write_node", write(i))
        assert once_more.data["seq"] == landed + 1  # answered from the log, not appended
    assert head(db) == landed + 1
    assert "Traceback" not in capfd.readouterr().err


def test_a_full_disk_is_one_line_from_the_cli(small_disk: Path) -> None:
    db = published(small_disk / "log.db")
    args = ["write", "node", "Person:name=Ada", "-p", f"bio={BIO}", "--source", "t"]
    args += ["--method", "manual", "--idempotency-key", "key-1"]
    written = head(db)
    filler = fill(small_disk)
    refused = writegate(db, *args, code=1)
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith(f"error: LOG_UNAVAILABLE: {db}: "), refused.stderr
    assert "full" in refused.stderr
    assert head(db) == written  # nothing appended

    filler.unlink()
    landed = writegate(db, *args).stdout
    assert writegate(db, *args).stdout == landed  # the same key again: answered, not appended
    assert head(db) == written + 1


@pytest.mark.parametrize("spare", [-256 * 1024, 16 * 1024], ids=["pages", "wal"])
def test_a_backup_that_runs_out_of_room_leaves_nothing_behind(
    small_disk: Path, db_path: Path, spare: int
) -> None:
    """The disk fills while the pages are copied, or after them, when the copy leaves WAL mode
    (its -wal and -shm): either way one line naming the copy, and nothing left on the disk."""
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for i in range(60):  # some 900 KB
            gate.write_node(**write(i))
    fill(small_disk, leave=db_path.stat().st_size + spare)
    before = sorted(small_disk.iterdir())
    dest = small_disk / "copy.db"
    refused = writegate(db_path, "backup", str(dest), code=1)
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith(f"error: {dest}: "), refused.stderr
    assert sorted(small_disk.iterdir()) == before


@pytest.mark.anyio
async def test_a_refusal_on_a_full_disk_keeps_its_own_code(small_disk: Path) -> None:
    """The refusal is the answer even when its record for auditors cannot be written."""
    db = published(small_disk / "log.db")
    async with stdio_agent(db) as agent:
        assert (await agent.call("write_node", write(0))).data["status"] == "written"
        fill(small_disk)
        out = await agent.call("write_node", {**write(1), "properties": {"age": "old"}})
    assert out.data["error_code"] == "SCHEMA_TYPE_MISMATCH", out.data


@pytest.fixture
def pg_on_small_disk(postgres: Server, pg_dsn: str) -> Iterator[tuple[str, Path]]:
    """A database whose tables are made on a small disk (a tablespace there), and the disk:
    outside the test's own folder, which the server's user may not enter."""
    name = pg_dsn.rsplit("/", 1)[1]
    with tempfile.TemporaryDirectory() as folder, tmpfs(Path(folder)) as disk:
        shutil.chown(disk, user=SUPERUSER)
        with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE TABLESPACE space_{name} LOCATION '{disk}'")
            conn.execute(f"ALTER DATABASE {name} SET default_tablespace = space_{name}")
        try:
            yield pg_dsn, disk
        finally:
            with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
                conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
                conn.execute(f"DROP TABLESPACE space_{name}")


def test_a_full_disk_under_postgresql_is_a_retryable_refusal(
    pg_on_small_disk: tuple[str, Path],
) -> None:
    dsn, small_disk = pg_on_small_disk
    with Gate.open(dsn) as gate:
        assert gate.publish_schema(SEED_SCHEMA).status == "published"
        landed = gate.log.head()[0]
        filler = fill(small_disk, leave=64 * 1024)
        for i in range(40):  # until the disk is full
            out = gate.write_node(actor=AGENT, **write(i))
            if not isinstance(out, WriteNodeResult):
                break
            landed = out.seq
        assert isinstance(out, Rejected)
        assert out.error_code == "LOG_UNAVAILABLE", out
        assert "No space left on device" in out.details["cause"]
        assert gate.log.head()[0] == landed

        filler.unlink()
        again = gate.write_node(actor=AGENT, **write(i))
        assert isinstance(again, WriteNodeResult)
        assert again.seq == landed + 1
        once_more = gate.write_node(actor=AGENT, **write(i))
        assert isinstance(once_more, WriteNodeResult)
        assert once_more.seq == landed + 1  # answered from the log, not appended
        assert gate.log.head()[0] == landed + 1
