"""stdio: every request read before the client closes stdin is answered — also when the
server had already answered everything once (the handshake) before these arrived."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import person
from tests.server.conftest import published
from tests.server.harness import WRITEGATE
from writegate.gate.server.stdio import GRACE


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _call(i: int, tool: str, arguments: dict[str, Any]) -> bytes:
    params = {"name": tool, "arguments": arguments}
    return _line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})


def test_requests_after_the_handshake_are_answered_though_stdin_closes(db_path: Path) -> None:
    process = subprocess.Popen(
        [WRITEGATE, "--db", str(published(db_path)), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "eof", "version": "1"},
    }
    process.stdin.write(
        _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize})
    )
    process.stdin.flush()
    first = json.loads(process.stdout.readline())  # nothing is waiting for an answer now
    calls = [_call(1, "write_node", person("Ada"))]
    calls += [_call(i, "search_nodes", {"query": "Ada"}) for i in range(2, 6)]
    rest = _line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + b"".join(calls)
    out, _ = process.communicate(rest, timeout=60)  # and stdin closes right after
    replies = {reply["id"]: reply for reply in map(json.loads, out.splitlines())}
    assert first["result"]["serverInfo"]["name"] == "writegate"
    assert sorted(replies) == [1, 2, 3, 4, 5]
    assert all("result" in reply for reply in replies.values()), replies
    assert replies[1]["result"]["structuredContent"]["status"] == "written"
    assert replies[5]["result"]["structuredContent"]["nodes"]


@pytest.mark.parametrize("withdrawn", [1, "1"])  # the SDK matches "1" to request 1 too
def test_a_cancelled_request_is_not_waited_for_once_stdin_closes(
    db_path: Path, withdrawn: int | str
) -> None:
    """The SDK never answers a request the client cancelled; the server stops at EOF
    without waiting out its grace for that answer."""
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "cancel", "version": "1"},
    }
    cancel = {"requestId": withdrawn, "reason": "no longer needed"}
    lines = [
        _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize}),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _call(1, "search_nodes", {"query": "Ada"}),
        _line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}),
    ]
    done = subprocess.run(
        [WRITEGATE, "--db", str(published(db_path)), "serve"],
        input=b"".join(lines),
        capture_output=True,
        # below the grace, so a server that waited it out fails; start-up (slow on a busy
        # machine) counts too, so it is not a measure of speed
        timeout=GRACE - 1,
        check=True,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply["id"] for reply in replies if reply["id"] != 1] == [0]
