"""A write that waits for another process's write lock on the log's file: the server keeps
answering meanwhile (a ping sent after the write is answered first, while the lock is still
held), the write is answered ``LOG_UNAVAILABLE`` once the busy timeout (a setting) has
passed, and its retry with the same idempotency key lands once.

The lock is held by a real second process (``BEGIN IMMEDIATE`` on its own connection), as a
second stdio server or ``writegate write`` sharing the file would hold it."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from tests.cli.conftest import writegate
from tests.conftest import person
from tests.server.conftest import published
from tests.server.harness import Agent, http_agent, http_server, stdio_agent
from writegate.eventlog import EventLog
from writegate.gate.rejections import RejectionLog
from writegate.gate.server.observe import configure_logging
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.anyio
BUSY = {"WRITEGATE_LOG__BUSY_TIMEOUT": "2"}  # seconds a write waits for the lock
# ping is the legacy wire's (the 2026-07-28 wire dropped it); a read answers on both
HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


@contextmanager
def write_lock_held(db: Path) -> Iterator[None]:
    """Another process holds the file's write lock until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdin is not None
    try:
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0


async def waits_without_freezing(agent: Agent, db: Path) -> None:
    write = person("Ada", idempotency_key="ada-1")
    answered: list[str] = []
    with write_lock_held(db):
        async with anyio.create_task_group() as group:

            async def waiting_write() -> None:
                out = await agent.call("write_node", write)
                answered.append("write")
                assert out.is_error, out
                assert out.data["error_code"] == "LOG_UNAVAILABLE", out.data
                assert "not free within 2 s" in out.data["message"], out.data  # the setting
                assert "retry" in out.data["message"], out.data

            group.start_soon(waiting_write)
            await anyio.sleep(0.3)  # the write reaches the lock (the order below holds anyway)
            await agent.client.send_ping()
            answered.append("ping")
            await agent.client.list_tools()
            answered.append("list")
        assert answered == ["ping", "list", "write"]  # all while the lock was held
    first = await agent.call("write_node", write)
    again = await agent.call("write_node", write)
    assert not first.is_error, first.data
    assert again.data["seq"] == first.data["seq"]
    with EventLog(db, create=False) as log:
        assert log.head()[0] == first.data["seq"] == 2  # the schema, then Ada once


async def test_a_stdio_server_answers_while_a_write_waits_for_the_lock(db_path: Path) -> None:
    async with stdio_agent(published(db_path), env=BUSY, mode="legacy") as agent:
        await waits_without_freezing(agent, db_path)


async def test_an_http_server_answers_while_a_write_waits_for_the_lock(db_path: Path) -> None:
    token = create_token(Path(f"{published(db_path)}.tokens.json"), "ada", ("writer",))
    with http_server(db_path, env=BUSY) as server:
        async with http_agent(server.url, token, mode="legacy") as agent:
            await waits_without_freezing(agent, db_path)


def test_the_busy_timeout_is_a_setting_and_a_busy_log_is_one_line(
    db_path: Path, tmp_path: Path
) -> None:
    config = tmp_path / "writegate.toml"
    config.write_text("[log]\nbusy_timeout = 1\n")
    with write_lock_held(published(db_path)):
        refused = writegate(
            db_path, "--config", str(config), "write", "node", "Person:name=Ada",
            "--source", "cli", "--method", "manual", code=1,
        )  # fmt: skip
    assert refused.stderr == (  # the write waited (opening the log needs no lock)
        f"error: LOG_UNAVAILABLE: {db_path}: the write lock was not free within 1 s (another process is "
        "writing to the file); nothing was appended, retry\n"
    )


# a refusal is the gate's answer whether or not the rejections table can be written now:
# the busy timeout here is longer than the test waits, so an answer that waited for the
# lock (to record the refusal first) never comes
REJECT = {"WRITE_GATE_UNKNOWN_LABEL_POLICY": "reject"}  # (seed 000's schema remaps them)
LONG_BUSY = {"WRITEGATE_LOG__BUSY_TIMEOUT": "120", **REJECT}
STARSHIP = person("Enterprise", label="Starship")  # no such label in seed 000's schema


async def refused_while_the_lock_is_held(agent: Agent, db: Path) -> None:
    answered: list[str] = []
    with anyio.fail_after(60), write_lock_held(db):
        out = await agent.call("write_node", STARSHIP)
        answered.append("refusal")
        assert out.is_error, out
        assert out.data["error_code"] == "SCHEMA_UNKNOWN_LABEL", out.data
        await agent.client.send_ping()
        answered.append("ping")
        async with anyio.create_task_group() as group:
            group.start_soon(agent.call, "write_node", person("Ada"))  # waits for the lock
            await anyio.sleep(0.3)  # the write reaches the lock (the order below holds anyway)
            out = await agent.call("write_node", STARSHIP)
            answered.append("second refusal")
            assert out.data["error_code"] == "SCHEMA_UNKNOWN_LABEL", out.data
            await agent.client.send_ping()
            answered.append("ping")
            group.cancel_scope.cancel()
    assert answered == ["refusal", "ping", "second refusal", "ping"]  # the lock still held


def recorded_refusals(db: Path) -> list[str]:
    with EventLog(db, create=False) as log:
        return [r.error_code for r in RejectionLog(log).read()]


async def test_a_stdio_server_answers_a_refusal_while_another_process_holds_the_lock(
    db_path: Path,
) -> None:
    async with stdio_agent(published(db_path), env=LONG_BUSY, mode="legacy") as agent:
        await refused_while_the_lock_is_held(agent, db_path)
    # recorded once the lock freed (at the latest when the server stopped)
    assert recorded_refusals(db_path) == ["SCHEMA_UNKNOWN_LABEL"] * 2


async def test_an_http_server_answers_a_refusal_while_another_process_holds_the_lock(
    db_path: Path,
) -> None:
    token = create_token(Path(f"{published(db_path)}.tokens.json"), "ada", ("writer",))
    with http_server(db_path, env=LONG_BUSY) as server:
        async with http_agent(server.url, token, mode="legacy") as agent:
            await refused_while_the_lock_is_held(agent, db_path)
    assert recorded_refusals(db_path) == ["SCHEMA_UNKNOWN_LABEL"] * 2, server.last_said
    assert "internal error" not in server.last_said


@pytest.fixture(params=["fresh", "after serve"])
def logging_before(request: pytest.FixtureRequest) -> Iterator[None]:
    """The test's process as it is, or as ``serve`` left its logging (its own handlers on
    writegate's loggers): a command run in the test's process must say what a new process
    would either way (``tests.console``; a warning went to serve's handler, unseen)."""
    if request.param == "fresh":
        yield
        return
    loggers = [logging.getLogger(name) for name in ("writegate", "uvicorn")]
    kept = [(logger.handlers[:], logger.level, logger.propagate) for logger in loggers]
    configure_logging("warning", "plain")
    yield
    for logger, (handlers, level, propagate) in zip(loggers, kept, strict=True):
        logger.handlers, logger.level, logger.propagate = handlers, level, propagate


@pytest.mark.usefixtures("logging_before")
def test_a_cli_write_refused_while_the_lock_is_held_is_answered_at_once(
    db_path: Path, tmp_path: Path
) -> None:
    """The CLI stops right after its answer: nobody would record the refusal later, so one
    line says what auditors will not find, and the refusal's own line is the answer."""
    config = tmp_path / "writegate.toml"
    config.write_text("[log]\nbusy_timeout = 120\n")  # longer than ``writegate`` waits
    with write_lock_held(published(db_path)):
        refused = writegate(
            db_path, "--config", str(config), "write", "node", "Starship:name=Enterprise",
            "--source", "cli", "--method", "manual", code=1, env={"WRITEGATE_OPERATOR": "ada", **REJECT},
        )  # fmt: skip
    lost, answer = refused.stderr.splitlines()
    assert answer.startswith("error: SCHEMA_UNKNOWN_LABEL: "), refused.stderr
    assert lost.startswith(
        f"{db_path}: 1 refusal not recorded in the rejections table (another process held "
        "the write lock until this one stopped): write_node by operator:ada "
        "(SCHEMA_UNKNOWN_LABEL) at "
    ), refused.stderr
    assert recorded_refusals(db_path) == []
