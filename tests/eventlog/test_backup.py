"""``writegate backup``: an online copy taken while an agent appends is a verified prefix of the
live log, carries the tokens file, never overwrites, and is refused when it does not verify."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import SEED_SCHEMA, person
from tests.console import run as writegate_run
from tests.readme import blocks, lines, section
from tests.server.harness import WRITEGATE
from writegate.eventlog import Actor, EventLog
from writegate.gate import Gate
from writegate.gate.server.tokens import create_token

AGENT = Actor(agent="agent-1", session="s-1")


def writegate(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return writegate_run(["--db", str(db), *args])


def hashes(db: Path) -> list[str]:
    with EventLog(db, readonly=True) as log:
        return [event.hash for event in log.iter_events()]


@contextmanager
def appending(db: Path) -> Iterator[list[int]]:
    """An agent appending without pause until the block ends; yields its write count."""
    stop = threading.Event()
    count = [0]
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)

        def agent() -> None:
            while not stop.is_set():
                assert gate.write_node(actor=AGENT, **person(f"p{count[0]}")).status == "written"
                count[0] += 1

        thread = threading.Thread(target=agent)
        thread.start()
        try:
            while count[0] < 200:  # a log with some history before the copy
                stop.wait(0.01)
            yield count
        finally:
            stop.set()
            thread.join(timeout=60)


def test_a_backup_taken_while_an_agent_appends_is_a_verified_prefix(
    tmp_path: Path, db_path: Path
) -> None:
    tokens = Path(f"{db_path}.tokens.json")
    create_token(tokens, "agent-1", ("writer",))
    dest = tmp_path / "backups" / "copy.db"
    dest.parent.mkdir()
    with appending(db_path) as count:
        before = count[0]
        out = writegate(db_path, "backup", str(dest))
        during = count[0] - before
    assert out.returncode == 0, out.stderr
    assert during > 0  # the agent kept appending while the copy was taken
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"backed up {db_path} to {dest} (")
    seq, digest = lines[-1].split(":")
    assert lines[1] == (
        f"the copy verifies (hash chain, append-only triggers, history index, state read model) up to seq {seq}"
    )
    assert lines[2] == f"tokens: copied to {dest}.tokens.json"

    copied, live = hashes(dest), hashes(db_path)
    assert len(copied) == int(seq)
    assert copied[-1] == digest
    assert live[: len(copied)] == copied  # a prefix of the live log…
    assert len(live) > len(copied)  # …which went on growing
    verified = writegate(dest, "verify")
    assert verified.returncode == 0, verified.stderr
    assert f"verified up to seq {seq}" in verified.stdout
    # the live log extends the backup: its anchor holds there
    assert writegate(db_path, "verify", "--expect-head", lines[-1]).returncode == 0

    token_copy = Path(f"{dest}.tokens.json")
    assert token_copy.read_bytes() == tokens.read_bytes()
    assert stat.S_IMODE(token_copy.stat().st_mode) == 0o600
    assert sorted(p.name for p in dest.parent.iterdir()) == ["copy.db", "copy.db.tokens.json"]


def test_a_backup_never_overwrites_and_says_so_in_one_line(tmp_path: Path, db_path: Path) -> None:
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
    dest = tmp_path / "copy.db"
    assert writegate(db_path, "backup", str(dest)).returncode == 0
    first = dest.read_bytes()
    again = writegate(db_path, "backup", str(dest))
    assert again.returncode == 1
    assert again.stderr == f"error: {dest} exists (a backup never overwrites)\n"
    assert dest.read_bytes() == first
    missing = writegate(tmp_path / "nope.db", "backup", str(tmp_path / "x.db"))
    assert missing.returncode == 1
    assert missing.stderr.count("\n") == 1
    assert "nope.db" in missing.stderr


def test_a_copy_that_does_not_verify_is_not_kept(tmp_path: Path, db_path: Path) -> None:
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(actor=AGENT, **person("Alice"))
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE state_nodes SET properties = '{\"age\":99}'")
    conn.commit()
    conn.close()
    out = writegate(db_path, "backup", str(tmp_path / "copy.db"))
    assert out.returncode == 1
    assert out.stderr.startswith(
        "error: the copy does not verify (state read model: differs from a replay"
    )
    assert [p.name for p in tmp_path.iterdir() if "copy.db" in p.name] == []  # no partial left


def test_the_api_copies_a_read_only_log_page_for_page(tmp_path: Path, db_path: Path) -> None:
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(actor=AGENT, **person("Alice"))
    os.chmod(db_path, 0o444)  # an auditor's read-only copy can be backed up too
    with EventLog(db_path, readonly=True) as log:
        head = log.backup(tmp_path / "copy.db")
        assert head == log.head()
    original = sqlite3.connect(db_path)
    copy = sqlite3.connect(tmp_path / "copy.db")
    tables = [r[0] for r in original.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert {"events", "event_streams", "idempotency", "state_nodes"} <= set(tables)
    for table in [*tables, "sqlite_master"]:
        sql = f"SELECT * FROM {table}"  # every row, in any order (a table may have one column)
        assert sorted(copy.execute(sql), key=repr) == sorted(original.execute(sql), key=repr)
    for pragma in ("application_id", "user_version"):
        assert (
            copy.execute(f"PRAGMA {pragma}").fetchone()
            == original.execute(f"PRAGMA {pragma}").fetchone()
        )
    assert copy.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    original.close()
    copy.close()


def test_the_readme_backup_and_restore_commands_work_as_pasted(db_path: Path) -> None:
    pasted = blocks(section("## Backups and restore", subsections=True), "sh")
    assert len(pasted) == 2
    folder = db_path.parent
    with Gate.open(folder / "memory.db") as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(actor=AGENT, **person("Alice"))
    create_token(folder / "memory.db.tokens.json", "agent-1", ("writer",))
    env = {**os.environ, "PATH": f"{Path(WRITEGATE).parent}:{os.environ['PATH']}"}
    for block in pasted:
        for command in lines(block):
            done = subprocess.run(
                command,
                shell=True,
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, (command, done.stderr)
    assert hashes(folder / "memory.db")[-1] == hashes(folder / "backups" / "memory.db")[-1]
