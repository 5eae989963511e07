"""Backups, copies and imports as jobs, run as an operator runs them (a real ``writegate``
process each time): a cancelled backup or copy leaves nothing at its destination, an
import killed half way and run again writes every item exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from tests.cli.conftest import writegate
from tests.conftest import SEED_SCHEMA
from tests.jobs.test_rebuild_jobs import big_log, half_way, job_on, started
from tests.server.harness import WRITEGATE
from writegate.eventlog import open_log
from writegate.gate import Gate
from writegate.gate.jobs import Job

__all__ = ["big_log", "started"]  # the fixtures, shared with the rebuild jobs
PEOPLE = 6_000  # three of the import's batches: a kill after the first leaves work to resume


def at_work(db: Path, target: str, process: subprocess.Popen[bytes]) -> Job:
    """The job once it has recorded some work done and before it has ended (a backup's
    copy may be whole and not yet verified), its process stopped there (SIGSTOP)."""
    deadline = time.monotonic() + 120  # a guard against hanging, not a measurement
    while time.monotonic() < deadline:
        job = job_on(db, target)
        if job is not None and job.done > 0:
            os.kill(process.pid, signal.SIGSTOP)
            stopped = job_on(db, target)
            assert stopped is not None
            assert stopped.state == "running"
            return stopped
        assert process.poll() is None, "the job ended before it was seen at work"
        time.sleep(0.01)
    raise AssertionError("the job never did any work")


def cancelled_half_way(db: Path, target: str, command: list[str]) -> subprocess.Popen[bytes]:
    """``command`` (a job on ``target``), caught with some of its work done, cancelled
    by another ``writegate`` process, then let go on: it stops and says so."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        job = at_work(db, target, process)
        asked = writegate(db, "jobs", "cancel", str(job.id))
        assert (
            asked.stdout.strip() == f"job {job.id}: cancellation asked; it stops at its next batch"
        )
        os.kill(process.pid, signal.SIGCONT)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 1
    return process


def test_a_cancelled_backup_leaves_nothing_behind(big_log: Path, tmp_path: Path) -> None:
    dest = tmp_path / "backup.db"
    command = [WRITEGATE, "--db", str(big_log), "backup", str(dest)]
    process = cancelled_half_way(big_log, str(dest), command)
    ended = job_on(big_log, str(dest))
    assert ended is not None
    assert (ended.kind, ended.state) == ("backup", "cancelled")
    assert process.stderr is not None
    assert process.stderr.read().decode() == (
        f"error: job {ended.id} was cancelled; {dest} was not made; nothing is left behind\n"
    )
    assert list(tmp_path.iterdir()) == []  # no DEST, no partial copy, no tokens file

    again = writegate(big_log, "backup", str(dest))  # the destination is free again
    assert again.stdout.startswith(f"backed up {big_log} to {dest} (")


def test_a_cancelled_copy_into_a_new_file_leaves_nothing_behind(
    big_log: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "copy.db"
    command = [WRITEGATE, "copy", "--batch", "1", str(big_log), str(dest)]  # slowly
    cancelled_half_way(big_log, str(dest), command)
    ended = job_on(big_log, str(dest))
    assert ended is not None
    assert (ended.kind, ended.state) == ("copy", "cancelled")
    assert ended.outcome == f"{dest} was not made; nothing is left behind"
    assert list(tmp_path.iterdir()) == []


def memory_file(folder: Path) -> Path:
    """The official MCP memory server's JSONL: one entity a line."""
    path = folder / "memory.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "type": "entity",
                    "name": f"person {i:05}",
                    "entityType": "Person",
                    "observations": [f"age: {i % 90}"],
                }
            )
            + "\n"
            for i in range(PEOPLE)
        )
    )
    return path


def test_an_import_killed_half_way_and_run_again_writes_every_item_exactly_once(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
    memory = memory_file(tmp_path)
    command = ["import", "mcp-memory", str(memory), "--method", "manual"]
    importing = subprocess.Popen(
        [WRITEGATE, "--db", str(db), *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started.append(importing)
    caught = half_way(db, str(db), importing, past=0)
    os.kill(importing.pid, signal.SIGKILL)
    importing.wait()

    resumed = writegate(db, *command)
    ended = job_on(db, str(db))
    assert ended is not None
    assert (ended.id, ended.kind, ended.state, ended.attempts) == (
        caught.id,
        "import",
        "completed",
        2,
    )
    assert (ended.done, ended.total) == (PEOPLE, PEOPLE)
    assert f"resuming job {caught.id} (import {db}) from {caught.done:,} of " in resumed.stderr
    accepted = int(resumed.stdout.split("accepted ")[1].split(" ")[0])
    assert 0 < accepted < PEOPLE  # it went on after what it had imported

    with open_log(db, create=False, readonly=True) as log:
        written = Counter(
            json.dumps(event.payload["node"], sort_keys=True)
            for event in log.iter_events(after_seq=0)
            if event.type == "node.written"
        )
    assert len(written) == PEOPLE
    assert set(written.values()) == {1}  # every item written, none of them twice
