"""Concurrent writer processes and writers killed mid-write (real processes, real file)."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA
from writegate.gate import Gate

WRITER = Path(__file__).with_name("writer_process.py")


def _spawn(db: Path, prefix: str, count: int, mode: str = "single") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(db), prefix, str(count), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _assert_consistent(db: Path) -> Gate:
    g = Gate.open(db, create=False)
    report = g.verify()
    assert report.ok, [c for c in report.checks if not c.ok]
    return g


@pytest.mark.slow
def test_four_processes_500_writes_each(db_path: Path) -> None:
    with Gate.open(db_path) as g:
        g.publish_schema(SEED_SCHEMA)
    procs = [_spawn(db_path, f"w{i}", 500) for i in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    with _assert_consistent(db_path) as g:
        nodes = g.log.read(types=["node.written"], limit=10_000).events
        assert len(nodes) == 2000
        seqs = [e.seq for e in g.log.iter_events()]
        assert seqs == list(range(1, 2002))  # schema + 2000, gapless
        assert {e.actor.agent for e in nodes} == {f"proc-w{i}" for i in range(4)}
        names = {e.payload["node"]["keys"]["name"] for e in nodes}
        assert len(names) == 2000


@pytest.mark.slow
def test_sigkill_at_random_moments_never_leaves_a_half_written_event(tmp_path: Path) -> None:
    rng = random.Random(20261122)
    for round_ in range(24):
        # a new log every fourth round keeps replay cheap; each log still survives four crashes
        db_path = tmp_path / f"log-{round_ // 4}.db"
        if round_ % 4 == 0:
            with Gate.open(db_path) as g:
                g.publish_schema(SEED_SCHEMA)
        proc = _spawn(db_path, f"r{round_}", 100_000, mode="mixed")
        time.sleep(rng.uniform(0.35, 0.9))  # includes interpreter start-up: kills land anywhere
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        acknowledged = [int(line) for line in out.split()]
        with _assert_consistent(db_path) as g:
            head = g.log.head()[0]
            assert all(seq <= head for seq in acknowledged)  # nothing acknowledged was lost
            assert g.state.checkpoint(g.log.connection()) == head
