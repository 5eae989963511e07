"""An auditor verifies a live log: twenty agents keep writing while ``writegate verify`` and the
``integrity_report`` tool run again and again. No check may cry tamper because a write landed
between two of its reads, and a real edit of the read model is still caught under load."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from tests.conftest import person
from tests.server.conftest import published
from tests.server.harness import WRITEGATE, stdio_agent
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.audit.integrity import IntegrityReport

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

AGENTS = 20
RUNS = 4
PACE = 0.1
VERIFIED = re.compile(r"^verified up to seq (\d+)$", re.MULTILINE)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def agents_writing(db: Path) -> Iterator[list[int]]:
    """Twenty agents (threads sharing one Gate) writing until the block ends, each at an
    agent's pace (a write, then ``PACE`` seconds); yields each agent's count of accepted
    writes, and re-raises anything that went wrong in one. Flat out, they would grow the log
    by thousands of events during each ``verify``, which then reads them all: the time a
    run takes would be the log's size, not the concurrency under test."""
    stop = threading.Event()
    written = [0] * AGENTS
    failures: list[BaseException] = []
    with Gate.open(db) as gate:

        def agent(index: int) -> None:
            actor = Actor(agent=f"agent-{index}", session=f"s-{index}")
            try:
                while not stop.is_set():
                    result = gate.write_node(actor=actor, **person(f"a{index}-{written[index]}"))
                    assert result.status == "written", result
                    written[index] += 1
                    stop.wait(PACE)
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=agent, args=(i,)) for i in range(AGENTS)]
        for thread in threads:
            thread.start()
        try:
            yield written
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=60)
    assert not failures, failures[0]
    assert all(written), written  # every agent was writing throughout


def head(db: Path) -> int:
    with Gate.open(db, readonly=True) as gate:
        return gate.log.head()[0]


async def verify(db: Path) -> subprocess.CompletedProcess[bytes]:
    return await anyio.run_process([WRITEGATE, "--db", str(db), "verify", "--anchor"], check=False)


def edit_state_table(db: Path) -> None:
    """What the state comparison exists to catch: a read-model row changed by hand."""
    conn = sqlite3.connect(db, timeout=60)
    conn.execute("UPDATE state_nodes SET properties = '{\"age\":99}' WHERE identity LIKE '%Alice%'")
    assert conn.total_changes == 1
    conn.commit()
    conn.close()


async def test_verify_and_integrity_report_hold_while_agents_write(db_path: Path) -> None:
    published(db_path)
    with Gate.open(db_path) as gate:
        gate.write_node(actor=Actor(agent="seed"), **person("Alice"))
    async with stdio_agent(db_path, "auditor-1", ("auditor",)) as auditor:
        with agents_writing(db_path) as written:
            last = 0
            for _ in range(RUNS):
                before = head(db_path)
                out = await verify(db_path)
                text = out.stdout.decode()
                assert out.returncode == 0, text + out.stderr.decode()
                seq = int(VERIFIED.findall(text)[-1])
                assert text.splitlines()[-1].startswith(
                    f"{seq}:"
                )  # the anchor is what was verified
                assert seq > last
                assert seq >= before
                last = seq
                assert head(db_path) > before  # the agents kept writing during the run

                report = await auditor.call("integrity_report", {})
                assert not report.is_error, report.data
                assert report.data["ok"], report.data["checks"]

                in_process = gate_verify(db_path)
                assert in_process.ok, in_process.first_failure
                assert in_process.head_seq >= seq

            edit_state_table(db_path)
            tampered = await verify(db_path)
            assert tampered.returncode == 1
            assert tampered.stderr.decode().strip() == (
                "error: state read model: differs from a replay of the log (edited outside the gate?)"
            )
            report = await auditor.call("integrity_report", {})
            assert not report.data["ok"]
            failed = [c["name"] for c in report.data["checks"] if not c["ok"]]
            assert failed == ["state read model"]
        assert sum(written) > 0


def gate_verify(db: Path) -> IntegrityReport:
    """``Gate.verify`` from the Python API, in this thread, while the agents write."""
    with Gate.open(db, readonly=True) as gate:
        return gate.verify()
