"""The jobs table on each backend (SQLite and PostgreSQL): one running job per target,
a dead process's job taken over by one resumer only, progress, cancellation, outcomes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from writegate.eventlog import Actor, open_log
from writegate.gate.jobs import Job, Jobs, Kind, Report, TargetBusy

OPS = Actor(agent="ops", transport="cli")
ANA = Actor(agent="ana", transport="cli")


class Options(BaseModel):
    regate: bool = False


def halfway_then_done(job: Job, report: Report) -> str:
    report(5, 10)
    return f"{job.target}: done"


def jobs_on(log_at: str | Path) -> Jobs:
    log = open_log(log_at, create=True)
    return Jobs(log, {"rebuild": Kind(Options, lambda _t, _o: 10, halfway_then_done)})


def claimed_by_a_process_that_died(log_at: str | Path, target: str) -> None:
    """A real process claims ``target`` and dies without a word (as SIGKILL leaves it)."""
    script = (
        "import os, sys\n"
        "from tests.jobs.test_job_table import OPS, jobs_on\n"
        "jobs_on(sys.argv[1]).start(OPS, 'rebuild', sys.argv[2], {})\n"
        "os._exit(0)\n"
    )
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", script, str(log_at), target], check=True, cwd=root)


def test_one_job_per_target_and_an_interrupted_one_is_taken_over_once(
    any_db: str | Path,
) -> None:
    jobs = jobs_on(any_db)
    running = jobs.start(OPS, "rebuild", "snapshot", {})
    with pytest.raises(TargetBusy) as busy:
        jobs.start(ANA, "rebuild", "snapshot", {})
    assert busy.value.job.id == running.id
    assert jobs.start(ANA, "rebuild", "other", {}).target == "other"  # another target is free

    claimed_by_a_process_that_died(any_db, "orphan")
    (orphan,) = [job for job in jobs.table.listed() if job.target == "orphan"]
    assert orphan.shown() == "interrupted"
    resumed = jobs.start(ANA, "rebuild", "orphan", {})  # the same work takes it over
    assert (resumed.id, resumed.attempts, resumed.owner) == (orphan.id, 2, "ops")
    assert jobs.table.adopt(orphan) is None  # a second resumer, reading it as it was, loses
    assert resumed.shown() == "running"
    jobs.table.log.close()


def test_other_work_on_the_target_of_an_interrupted_job_supersedes_it(
    any_db: str | Path,
) -> None:
    """Issue 42, defect 3: other work used to wait, forever, on a job nobody ran."""
    jobs = jobs_on(any_db)
    claimed_by_a_process_that_died(any_db, "orphan")
    (orphan,) = [job for job in jobs.table.listed() if job.target == "orphan"]
    heard: list[str] = []
    superseding = jobs.start(OPS, "rebuild", "orphan", {"regate": True}, told=heard.append)
    assert superseding.id != orphan.id
    assert heard == [
        f"job {orphan.id} (rebuild orphan) was interrupted; this rebuild supersedes it"
    ]
    ended = jobs.table.get(orphan.id)
    assert ended is not None
    assert (ended.state, ended.outcome) == ("cancelled", "superseded by a rebuild of orphan")
    with pytest.raises(TargetBusy):  # the new work is alive: nothing else takes the target
        jobs.start(ANA, "rebuild", "orphan", {})
    jobs.table.log.close()


def test_a_job_records_its_progress_and_ends_completed_or_cancelled(any_db: str | Path) -> None:
    jobs = jobs_on(any_db)
    ended = jobs.run(jobs.start(OPS, "rebuild", "snapshot", {}))
    assert (ended.state, ended.done, ended.total, ended.outcome) == (
        "completed",
        5,
        10,
        "snapshot: done",
    )
    asked = jobs.start(OPS, "rebuild", "snapshot", {})
    assert jobs.cancel(asked.id).cancel_requested
    stopped = jobs.run(asked)
    assert (stopped.state, stopped.done) == ("cancelled", 5)
    assert jobs.table.counts() == {"completed": 1, "cancelled": 1}
    jobs.table.log.close()


def test_a_progress_report_the_busy_log_refuses_does_not_fail_the_job(tmp_path: Path) -> None:
    log_at = tmp_path / "log.db"
    log = open_log(log_at, create=True, busy_timeout=0.1)
    other = sqlite3.connect(log_at, isolation_level=None)  # another process's writer

    def while_the_log_is_busy(job: Job, report: Report) -> str:
        other.execute("BEGIN IMMEDIATE")
        report(5, 10)
        other.execute("ROLLBACK")
        return "done"

    jobs = Jobs(log, {"rebuild": Kind(Options, lambda _t, _o: 10, while_the_log_is_busy)})
    ended = jobs.run(jobs.start(OPS, "rebuild", "snapshot", {}))
    assert (ended.state, ended.outcome, ended.done) == ("completed", "done", 5)
    other.close()
    log.close()


def files_open_on(log_at: Path) -> int:
    """This process's file descriptors on the log's files (each SQLite connection holds
    its own on the database and on its -wal)."""
    fds = Path("/proc/self/fd")
    named = {str(log_at), f"{log_at}-wal", f"{log_at}-shm"}
    found = 0
    for fd in fds.iterdir():
        try:
            found += os.readlink(fd) in named
        except OSError:  # closed since it was listed
            continue
    return found


def test_jobs_run_on_threads_of_their_own_leave_no_connection_open_behind_them(
    tmp_path: Path,
) -> None:
    log_at = tmp_path / "log.db"
    log = open_log(log_at, create=True)

    def reads_the_log(job: Job, report: Report) -> str:
        report(log.head()[0], 10)  # the job's thread reads the log, as every kind does
        return "done"

    jobs = Jobs(log, {"rebuild": Kind(Options, lambda _t, _o: 10, reads_the_log)})

    def detached(target: str) -> None:  # as a server runs one: on a worker thread
        jobs.detach(jobs.start(OPS, "rebuild", target, {})).join()
        ended = jobs.table.listed(limit=1)[0]
        assert (ended.target, ended.state) == (target, "completed")

    detached("first")  # SQLite may keep one closed connection's file for its next open
    after_one = files_open_on(log_at)
    for n in range(5):
        detached(f"target {n}")
    assert files_open_on(log_at) == after_one  # a leak holds two more (file, -wal) per job
    log.close()
