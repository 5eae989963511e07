"""``writegate follow`` on PostgreSQL outlives a database restart: it says the connection
went, reconnects (listening again), and projects what was written after; a database that
stays gone ends it with one line and exit 1, never a traceback.

The server here is the test's own (not the run's shared one): it is restarted and stopped.
"""

from __future__ import annotations

import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA, person
from tests.postgres import Server, postgres_server
from tests.server.harness import WRITEGATE
from writegate.eventlog import Actor
from writegate.gate import Gate, WriteNodeResult


@pytest.fixture(scope="module")
def own_server() -> Iterator[Server]:
    with postgres_server() as server:
        yield server


def checkpoint(mirror: Path) -> int:
    if not mirror.exists():
        return 0
    try:
        with sqlite3.connect(mirror) as conn:
            row = conn.execute("SELECT seq FROM projection_checkpoints WHERE name = 'mirror'")
            found = row.fetchone()
    except sqlite3.OperationalError:  # made, its tables not yet
        return 0
    return int(found[0]) if found else 0


def until(condition: object, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def write(dsn: str, *names: str) -> int:
    """Write through a gate opened now (as an agent's next call would); the new head."""
    with Gate.open(dsn, default_actor=Actor(agent="writer")) as gate:
        for name in names:
            assert isinstance(gate.write_node(**person(name)), WriteNodeResult)
        return gate.log.head()[0]


def test_follow_outlives_a_restart_and_gives_up_on_a_database_gone(
    own_server: Server, tmp_path: Path
) -> None:
    dsn = own_server.create_database("followed")
    with Gate.open(dsn) as gate:
        gate.publish_schema(SEED_SCHEMA)
    head = write(dsn, "Ada", "Alan")
    mirror = tmp_path / "mirror.db"
    config = tmp_path / "writegate.toml"
    config.write_text(f'[projections.mirror]\nkind = "state"\npath = "{mirror}"\n')
    said = tmp_path / "follow.err"
    with said.open("wb") as stderr:
        follower = subprocess.Popen(
            [WRITEGATE, "--db", dsn, "--config", str(config), "follow", "--retry-for", "3"],
            stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    try:
        until(lambda: checkpoint(mirror) == head, "follow did not catch up")
        own_server.restart()
        head = write(dsn, "Grace", "Edsger")
        until(
            lambda: checkpoint(mirror) == head, f"not followed after a restart: {said.read_text()}"
        )
        until(lambda: "reconnected" in said.read_text(), "not said")  # (after the batch)
        assert follower.poll() is None
        assert "the connection was lost" in said.read_text()
        own_server.stop()
        follower.wait(timeout=60)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
        own_server.restart()  # (starts it if stopped) for whatever runs next
    assert follower.returncode == 1
    text = said.read_text()
    assert "Traceback" not in text
    last = text.strip().splitlines()[-1]
    assert last.startswith(f"error: postgresql://postgres@127.0.0.1:{own_server.port}/followed: ")
    assert last.endswith("(unreachable for over 3 s)")


def test_the_interval_is_not_a_poll_on_postgresql() -> None:
    shown = subprocess.run(
        [WRITEGATE, "follow", "--help"], capture_output=True, text=True, check=True
    )
    assert "on PostgreSQL, where each commit's notification wakes the follower" in " ".join(
        shown.stdout.split()
    )
