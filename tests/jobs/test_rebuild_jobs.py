"""Rebuilds as jobs, run as an operator runs them: killed half way and resumed, cancelled
half way, and the one-per-projection rule (a real ``writegate`` process each time)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import SEED_SCHEMA
from tests.server.harness import WRITEGATE
from writegate.eventlog import EventLogError, open_log
from writegate.gate import Gate
from writegate.gate.jobs import Job, JobTable
from writegate.gate.jobs.runner import REPORT_SECONDS

NODES = 8_000  # four of a staged model's 2,000-row commits: room to be caught half way twice


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("jobs") / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for start in range(0, NODES, 1000):
            items = [
                {
                    "op": "write_node",
                    "label": "Person",
                    "merge_keys": {"name": f"person {i}"},
                    "properties": {"age": i % 90},
                    "source": "census",
                    "extraction_method": "manual",
                    "reliability": 0.9,
                }
                for i in range(start, start + 1000)
            ]
            assert gate.write_batch(items=items).status == "written"
    return db


def configured(folder: Path, *names: str, kind: str = "jsonl") -> Path:
    toml = folder / "writegate.toml"
    toml.write_text(
        "".join(
            f'[projections.{name}]\nkind = "{kind}"\npath = "{folder / name}.{kind}"\n\n'
            for name in names
        )
    )
    return toml


def job_on(db: Path, target: str) -> Job | None:
    with open_log(db, create=False, readonly=True) as log:
        found = [job for job in JobTable(log).listed() if job.target == target]
    return found[0] if found else None


def half_way(db: Path, target: str, process: subprocess.Popen[bytes], past: int) -> Job:
    """The job once it records more than ``past`` events done and fewer than all (the
    staged model commits every 2,000 rows, so past that something is stored), its process
    stopped there (SIGSTOP; SIGCONT lets it go on) so that what follows meets it half way.

    The process runs in slices, held between them longer than a job waits between progress
    reports (``REPORT_SECONDS``), so each slice ends with its progress recorded: however
    fast the machine, the rebuild is seen half way rather than done before a look."""
    deadline = time.monotonic() + 120  # a guard against hanging, not a measurement
    os.kill(process.pid, signal.SIGSTOP)
    while time.monotonic() < deadline:
        try:
            job = job_on(db, target)
        except EventLogError as exc:  # stopped holding the log's WAL index: another slice
            if "locking protocol" not in str(exc):
                raise
            job = None
        if job is not None and past < job.done < job.total:
            assert job.state == "running"
            return job
        assert process.poll() is None, "the rebuild ended before it was seen half way"
        os.kill(process.pid, signal.SIGCONT)
        time.sleep(0.05)  # a slice: a few of its batches
        os.kill(process.pid, signal.SIGSTOP)
        time.sleep(REPORT_SECONDS + 0.05)
    raise AssertionError("the rebuild never got half way")


def killed_half_way(
    db: Path,
    toml: Path,
    target: str,
    started: list[subprocess.Popen[bytes]],
    *command: str,
    past: int = 3000,
) -> Job:
    """A ``rebuild`` of ``target`` (or ``command``: a ``jobs resume``) in a process of its
    own, killed (SIGKILL) half way, past ``past`` events: the job it leaves, interrupted."""
    rebuilding = subprocess.Popen(
        [WRITEGATE, "--db", str(db), "--config", str(toml), *(command or ("rebuild", target))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started.append(rebuilding)
    caught = half_way(db, target, rebuilding, past=past)
    os.kill(rebuilding.pid, signal.SIGKILL)
    rebuilding.wait()
    return caught


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()


@pytest.mark.parametrize("kind", ["jsonl", "prov"])
def test_a_rebuild_killed_half_way_resumes_from_its_checkpoint_and_ends_as_an_uninterrupted_one(
    big_log: Path, tmp_path: Path, started: list[subprocess.Popen[bytes]], kind: str
) -> None:
    toml = configured(tmp_path, "snapshot", "reference", kind=kind)
    writegate(big_log, "--config", str(toml), "rebuild", "reference")
    writegate(big_log, "--config", str(toml), "replay", "snapshot", "--to-seq", "500")
    before = (tmp_path / f"snapshot.{kind}").read_bytes()
    caught = killed_half_way(big_log, toml, "snapshot", started)

    listed = writegate(big_log, "--config", str(toml), "jobs", "--format", "jsonl").stdout
    shown = next(row for row in map(json.loads, listed.splitlines()) if row["id"] == caught.id)
    assert shown["state"] == "interrupted"
    assert shown["done"] < shown["total"]
    assert (tmp_path / f"snapshot.{kind}").read_bytes() == before  # nothing half-built shows

    resumed = writegate(big_log, "--config", str(toml), "jobs", "resume", str(caught.id))
    ended = job_on(big_log, "snapshot")
    assert ended is not None
    assert ended.id == caught.id
    assert (ended.state, ended.attempts) == ("completed", 2)
    applied = int(resumed.stdout.split("applied ")[1].split(" event")[0].replace(",", ""))
    assert 0 < applied < ended.total  # it continued; it did not start again
    said = f"snapshot: applied {applied:,} events (resumed job {caught.id} from seq "
    assert resumed.stdout.startswith(said), resumed.stdout
    assert int(resumed.stdout.removeprefix(said).split(")")[0]) + applied == ended.total
    snapshot = (tmp_path / f"snapshot.{kind}").read_bytes()
    assert snapshot == (tmp_path / f"reference.{kind}").read_bytes()
    assert len(snapshot.splitlines()) >= NODES


@pytest.mark.parametrize("kind", ["jsonl", "prov"])
def test_a_cancelled_rebuild_leaves_the_old_projection_intact_and_one_runs_per_projection(
    big_log: Path, tmp_path: Path, started: list[subprocess.Popen[bytes]], kind: str
) -> None:
    toml = configured(tmp_path, "cancelled", kind=kind)
    writegate(big_log, "--config", str(toml), "replay", "cancelled", "--to-seq", "500")
    before = (tmp_path / f"cancelled.{kind}").read_bytes()
    files = sorted(path.name for path in tmp_path.iterdir())
    rebuilding = subprocess.Popen(
        [WRITEGATE, "--db", str(big_log), "--config", str(toml), "rebuild", "cancelled"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    started.append(rebuilding)
    job = half_way(big_log, "cancelled", rebuilding, past=0)

    second = writegate(big_log, "--config", str(toml), "rebuild", "cancelled", code=1)
    assert second.stderr.strip() == (
        f"error: rebuild cancelled: job {job.id} (rebuild cancelled, {job.owner}) is running; "
        f"wait for it or cancel it (writegate jobs cancel {job.id})"
    )
    asked = writegate(big_log, "--config", str(toml), "jobs", "cancel", str(job.id))
    assert asked.stdout.strip() == f"job {job.id}: cancellation asked; it stops at its next batch"
    os.kill(rebuilding.pid, signal.SIGCONT)
    _, stderr = rebuilding.communicate(timeout=60)
    assert rebuilding.returncode == 1
    assert stderr.decode().strip().splitlines()[-1] == (
        f"error: job {job.id} was cancelled; cancelled is as it was before it"
    )
    ended = job_on(big_log, "cancelled")
    assert ended is not None
    assert (ended.id, ended.state) == (job.id, "cancelled")
    assert (tmp_path / f"cancelled.{kind}").read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == files  # no staging left behind


def test_the_next_rebuild_of_a_projection_resumes_the_one_that_died(
    big_log: Path, tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    toml = configured(tmp_path, "again")
    caught = killed_half_way(big_log, toml, "again", started)

    again = writegate(big_log, "--config", str(toml), "rebuild", "again")
    assert f"resuming job {caught.id} (rebuild again) from " in again.stderr
    ended = job_on(big_log, "again")
    assert ended is not None
    assert (ended.id, ended.state, ended.attempts) == (caught.id, "completed", 2)
    assert len((tmp_path / "again.jsonl").read_bytes().splitlines()) == NODES


def test_a_replay_after_a_rebuild_that_died_supersedes_it_and_runs(
    big_log: Path, tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    """Issue 42, defect 3: a service manager restarting ``replay`` after a crashed
    ``rebuild`` was refused forever ("resume it or cancel it")."""
    toml = configured(tmp_path, "restarted", "reference")
    writegate(big_log, "--config", str(toml), "rebuild", "reference")
    writegate(big_log, "--config", str(toml), "replay", "restarted", "--to-seq", "500")
    caught = killed_half_way(big_log, toml, "restarted", started)

    replayed = writegate(big_log, "--config", str(toml), "replay", "restarted")
    assert replayed.stderr == (
        f"note: job {caught.id} (rebuild restarted) was interrupted; this replay supersedes it\n"
    )
    with open_log(big_log, create=False, readonly=True) as log:
        jobs = {job.id: job for job in JobTable(log).listed() if job.target == "restarted"}
    assert jobs[caught.id].state == "cancelled"
    said = "superseded by a replay of restarted; removed what it staged: restarted.jsonl.model."
    assert (jobs[caught.id].outcome or "").startswith(said)
    (newest,) = [job for job in jobs.values() if job.id > caught.id]
    assert (newest.kind, newest.state) == ("replay", "completed")
    assert (tmp_path / "restarted.jsonl").read_bytes() == (
        tmp_path / "reference.jsonl"
    ).read_bytes()


def listed_done(db: Path, toml: Path, job_id: int) -> int:
    """The progress ``writegate jobs`` shows for the job."""
    listed = writegate(db, "--config", str(toml), "jobs", "--format", "jsonl").stdout
    shown = next(row for row in map(json.loads, listed.splitlines()) if row["id"] == job_id)
    assert shown["state"] == "interrupted"
    done: int = shown["done"]
    return done


@pytest.mark.parametrize("kind", ["jsonl", "prov"])
def test_cancelling_a_rebuild_killed_half_way_removes_its_staged_copy_and_says_so(
    big_log: Path, tmp_path: Path, started: list[subprocess.Popen[bytes]], kind: str
) -> None:
    """Issue 42, defect 12: the partial copy (tens of MB at scale) and its record stayed
    until the next rebuild."""
    toml = configured(tmp_path, "dropped", kind=kind)
    writegate(big_log, "--config", str(toml), "replay", "dropped", "--to-seq", "500")
    before = (tmp_path / f"dropped.{kind}").read_bytes()
    files = {path.name for path in tmp_path.iterdir()}
    caught = killed_half_way(big_log, toml, "dropped", started)
    new = {path.name for path in tmp_path.iterdir()} - files
    staged = sorted(name for name in new if name.rsplit("-", 1)[0] not in files)
    assert staged, "the kill left no staged copy to remove"  # (not the live model's journal)

    cancelled = writegate(big_log, "--config", str(toml), "jobs", "cancel", str(caught.id))
    said = cancelled.stdout.strip()
    assert said.startswith(f"job {caught.id}: cancelled while interrupted; removed "), said
    assert all(name in said for name in staged), (staged, said)
    assert {path.name for path in tmp_path.iterdir()} == files
    assert (tmp_path / f"dropped.{kind}").read_bytes() == before
    ended = job_on(big_log, "dropped")
    assert ended is not None
    assert (ended.id, ended.state, ended.outcome) == (
        caught.id,
        "cancelled",
        said.split(": ", 1)[1],
    )


@pytest.mark.parametrize("kind", ["jsonl", "prov"])
def test_after_each_kill_the_progress_listed_is_the_checkpoint_the_resume_starts_from(
    big_log: Path, tmp_path: Path, started: list[subprocess.Popen[bytes]], kind: str
) -> None:
    """Issue 42, defect 12: after a SIGKILL ``jobs`` showed 19,072 done and the resume
    started from 18,432 (progress was recorded before the staged model stored it)."""
    toml = configured(tmp_path, "counted", kind=kind)
    caught = killed_half_way(big_log, toml, "counted", started)
    first = listed_done(big_log, toml, caught.id)
    resume = ("jobs", "resume", str(caught.id))
    killed_half_way(big_log, toml, "counted", started, *resume, past=first)
    second = listed_done(big_log, toml, caught.id)
    assert first < second

    resumed = writegate(big_log, "--config", str(toml), *resume)
    assert f"resuming job {caught.id} (rebuild counted) from {second:,} of " in resumed.stderr
    assert f" (resumed job {caught.id} from seq {second}) " in resumed.stdout, resumed.stdout
    applied = int(resumed.stdout.split("applied ")[1].split(" event")[0].replace(",", ""))
    ended = job_on(big_log, "counted")
    assert ended is not None
    assert (ended.state, ended.attempts, ended.done) == ("completed", 3, ended.total)
    assert second + applied == ended.total
