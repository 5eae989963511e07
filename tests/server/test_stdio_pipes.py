"""stdio served on the event loop's own pipes (issue 13): a write over stdio wakes no worker
thread — the SDK's transport took three a call, and the tool call a fourth — the framing is
the SDK's, and stdin that is a file, not a pipe, is still served (by the SDK's transport)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import person
from tests.server.conftest import published
from tests.server.harness import WRITEGATE, stdio_agent

pytestmark = pytest.mark.anyio


def served_by(db: Path) -> int:
    """The pid of the ``writegate serve`` process serving ``db``."""
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(db).encode() in argv and b"serve" in argv:
            return int(entry.name)
    raise LookupError(db)


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


async def test_a_write_over_stdio_wakes_no_worker_thread(db_path: Path) -> None:
    async with stdio_agent(published(db_path), command=WRITEGATE) as agent:
        for name in ("P1", "P2", "P3"):
            assert not (await agent.call("write_node", person(name))).is_error
        pid = served_by(db_path)
        assert threads(pid) == 1
        found = await agent.call("search_nodes", {"query": "P1"})
        assert found.data["nodes"]
        assert threads(pid) == 2  # a read, which may scan, still runs on a worker thread


async def test_a_deletion_over_stdio_runs_on_a_worker_thread(db_path: Path) -> None:
    """A detach may delete many relationships: not on the loop, which answers pings and
    cancellations meanwhile."""
    async with stdio_agent(published(db_path), command=WRITEGATE) as agent:
        assert not (await agent.call("write_node", person("P1"))).is_error
        pid = served_by(db_path)
        assert threads(pid) == 1
        gone = person("P1", detach=True)
        del gone["properties"]
        assert not (await agent.call("delete_node", gone)).is_error
        assert threads(pid) == 2


def lines(*names: str) -> bytes:
    """A 2025 client's handshake, a write for each name, and a line that is not JSON."""
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "lines", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for i, name in enumerate(names, start=1):
        params = {"name": "write_node", "arguments": person(name)}
        messages.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages) + b"not json\n"


def answers(output: bytes) -> dict[Any, dict[str, Any]]:
    replies = [json.loads(line) for line in output.splitlines()]
    return {reply["id"]: reply for reply in replies}


def check(replies: dict[Any, dict[str, Any]], names: tuple[str, ...]) -> None:
    assert replies[0]["result"]["serverInfo"]["name"] == "writegate"
    for i, name in enumerate(names, start=1):
        result = replies[i]["result"]["structuredContent"]
        assert (result["status"], result["merge_keys"]) == ("written", {"name": name})
    assert replies[None]["error"]["code"] == -32700


def test_requests_sent_before_stdin_closes_are_answered(db_path: Path) -> None:
    names = ("Q1", "Q2", "Q3")
    done = subprocess.run(
        [WRITEGATE, "--db", str(published(db_path)), "serve"],
        input=lines(*names),
        capture_output=True,
        timeout=60,
        check=True,
    )
    check(answers(done.stdout), names)


def test_a_file_as_stdin_is_served_by_the_sdk_transport(db_path: Path, tmp_path: Path) -> None:
    names = ("R1",)
    (tmp_path / "in").write_bytes(lines(*names))
    with (tmp_path / "in").open("rb") as stdin, (tmp_path / "out").open("wb") as stdout:
        subprocess.run(
            [WRITEGATE, "--db", str(published(db_path)), "serve"],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            timeout=60,
            check=True,
        )
    replies = answers((tmp_path / "out").read_bytes())
    assert replies[0]["result"]["serverInfo"]["name"] == "writegate"
    assert replies[None]["error"]["code"] == -32700  # the write may be cut off at EOF
