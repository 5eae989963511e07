"""A writer never extends a chain that does not verify at its head.

Another log's ``-wal`` (holding commits) copied beside a log is replayed by SQLite into what
the file reads as: the other history's newest pages over this one's. ``verify`` sees the
chain break; a write must refuse in one line naming the log and that seq, and leave the file
and the stray ``-wal`` as they were (a write, or the checkpoint when its connection closes,
would merge that ``-wal`` into the file for good). A log's own ``-wal`` is no stranger."""

from __future__ import annotations

import hashlib
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.cli.conftest import writegate, writegate_process
from tests.conftest import AGENT, SEED_SCHEMA, person
from writegate.eventlog import ChainBroken, EventLog
from writegate.eventlog.canonical import chain_hash, stored_body
from writegate.eventlog.tables import APPEND_ONLY_TRIGGERS, create_tables
from writegate.eventlog.testing import emitting, note
from writegate.eventlog.transaction import stored_columns
from writegate.gate import Gate, Rejected

WRITE = ("write", "node", "Person:name=Zed", "--source", "t", "--method", "manual")


def history(db: Path, prefix: str, writes: int) -> None:
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for i in range(writes):
            gate.write_node(**person(f"{prefix}{i}"))


def stray_wal(tmp_path: Path, commits: int) -> Path:
    """``A.db`` (closed, so all in the file) with ``B.db``'s ``-wal`` beside it, copied while
    ``B.db`` was open with ``commits`` appends not yet checkpointed."""
    a, b = tmp_path / "A.db", tmp_path / "B.db"
    history(a, "A", 120)
    history(b, "B", 120)
    with Gate.open(b) as gate:
        for i in range(commits):
            gate.write_node(**person(f"B-late-{i}"))
        shutil.copy(f"{b}-wal", f"{a}-wal")
    return a


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("commits", [5, 60], ids=["a few commits", "more than a tail"])
def test_a_write_onto_a_stray_wal_is_refused_and_touches_nothing(
    tmp_path: Path, commits: int
) -> None:
    a = stray_wal(tmp_path, commits)
    wal = Path(f"{a}-wal")
    done = writegate(a, "verify", code=1)
    verified = done.stdout + done.stderr
    broken = re.search(r"chain broken at seq (\d+)", verified)
    ahead = re.search(r"state read model: checkpoint (\d+) but log head (\d+)", verified)
    # whose pages the -wal holds decides what verify meets: the chain broken, the read
    # model ahead of the log, or (more of another's pages) a file SQLite finds malformed
    malformed = "database disk image is malformed" in done.stderr
    assert broken is not None or ahead is not None or malformed, verified
    files = digest(a), digest(wal)

    refused = writegate(a, *WRITE, code=1)
    assert refused.stderr.count("\n") == 1, refused.stderr
    if broken is not None:
        assert refused.stderr.startswith(f"error: {a}: chain broken at seq {broken[1]}: ")
    elif ahead is not None:  # the chain's pages are this log's, the read model's another's
        assert refused.stderr.startswith(
            f"error: {a}: the read model has applied seq {ahead[1]}, past the log's head "
            f"{ahead[2]}: "
        ), refused.stderr
    else:
        assert refused.stderr.startswith(f"error: {a}: its newest events cannot be read ("), (
            refused.stderr
        )
    served = writegate_process(
        a, "serve", code=1, stdin=subprocess.DEVNULL
    )  # a server never starts
    assert served.stderr == refused.stderr

    assert (digest(a), digest(wal)) == files
    again = writegate(a, "verify", code=1)
    assert again.stdout + again.stderr == verified


def test_a_stray_wal_that_leaves_no_readable_tail_is_refused_and_touches_nothing(
    tmp_path: Path,
) -> None:
    """A bigger stranger: SQLite finds the file malformed where the tail is read. The write
    refused all the same, in one line naming the log (it was refused, but the checkpoint
    when its connection closed merged the -wal into the file)."""
    a = stray_wal(tmp_path, 400)
    wal = Path(f"{a}-wal")
    files = digest(a), digest(wal)
    refused = writegate(a, *WRITE, code=1)
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith(f"error: {a}: its newest events cannot be read ("), refused
    assert (digest(a), digest(wal)) == files


def test_a_log_with_its_own_wal_is_written(tmp_path: Path) -> None:
    """The commits of a log copied while it was open are its own: the write lands on them."""
    live, copy = tmp_path / "live.db", tmp_path / "copy.db"
    history(live, "A", 20)
    with Gate.open(live) as gate:
        gate.write_node(**person("late"))
        shutil.copy(live, copy)
        shutil.copy(f"{live}-wal", f"{copy}-wal")
    writegate(copy, *WRITE)
    with EventLog(copy, readonly=True) as log:
        assert log.verify().ok
        assert log.head()[0] == 23


def test_a_postgresql_writer_refuses_an_altered_head(pg_dsn: str) -> None:
    """PostgreSQL has no stray WAL, but the same check is cheap there: the newest events are
    read once per process before its first append, so a head altered behind the log's back
    (a superuser, triggers off) is refused, coded, with nothing appended."""
    with Gate.open(pg_dsn) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(**person("Ada"))
        last = gate.log.head()[0]
    with psycopg.connect(pg_dsn) as conn:  # one transaction: triggers off, edit, on
        conn.execute("ALTER TABLE events DISABLE TRIGGER USER")
        conn.execute("UPDATE events SET payload = '{}' WHERE seq = %s", (last,))
        conn.execute("ALTER TABLE events ENABLE TRIGGER USER")
    with Gate.open(pg_dsn) as gate:
        refused = gate.write_node(actor=AGENT, **person("Bob"))
        assert isinstance(refused, Rejected)
        assert refused.error_code == "LOG_UNAVAILABLE"
        assert refused.details["cause"].startswith(f"chain broken at seq {last}: ")
        assert gate.log.head()[0] == last


def _behind_its_back(db: Path, sql: str, *params: object) -> None:
    """Run ``sql`` on the file with the append-only triggers off, then put them back."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN")
        for trigger in APPEND_ONLY_TRIGGERS:
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute(sql, params)
        create_tables(conn)
        conn.execute("COMMIT")
    finally:
        conn.close()


def test_a_tail_altered_after_opening_is_refused_at_the_first_append(db_path: Path) -> None:
    with EventLog(db_path) as log:
        log.append(AGENT, emitting(note("a"), note("b"), note("c")))
    with EventLog(db_path) as log:  # opened: its tail verified, head 3 seen
        _behind_its_back(db_path, "UPDATE events SET payload = '{}' WHERE seq = 3")
        with pytest.raises(
            ChainBroken, match=rf"^{re.escape(str(db_path))}: chain broken at seq 3: "
        ):
            log.append(AGENT, emitting(note("d")))
        assert log.head()[0] == 3


def test_a_head_rewritten_after_opening_is_refused_at_the_first_append(db_path: Path) -> None:
    """The newest event replaced by another that chains and hashes well: the tail verifies,
    but it is not the head this process saw when it opened the log."""
    with EventLog(db_path) as log:
        log.append(AGENT, emitting(note("a"), note("b")))
    with EventLog(db_path) as log:
        event = log.read_range(2, 2)[0]
        forged = event.model_copy(update={"payload": {"text": "forged"}})
        columns = stored_columns(forged)
        digest = chain_hash(forged.prev_hash, stored_body(**columns))
        _behind_its_back(
            db_path,
            "UPDATE events SET payload = ?, hash = ? WHERE seq = 2",
            columns["payload"],
            digest,
        )
        with pytest.raises(
            ChainBroken, match="chain broken at seq 2: the event this process found"
        ):
            log.append(AGENT, emitting(note("c")))
        assert log.head() == (2, digest)
