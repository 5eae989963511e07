"""When the log itself fails under a running server (here: its file replaced by one that is no
database, which every new connection then opens): ``/healthz`` answers 503 "unreachable"
and no more (the server's log says what is wrong), and a tool call is a JSON-RPC internal
error, logged once with its traceback."""

from __future__ import annotations

import os
from pathlib import Path

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from tests.server.conftest import published
from tests.server.harness import http_agent, http_server
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.anyio


def _break(db: Path) -> None:
    junk = db.with_name("junk")
    junk.write_bytes(os.urandom(8192))
    os.replace(junk, db)


def test_healthz_is_503_when_the_log_cannot_be_read(db_path: Path) -> None:
    with http_server(published(db_path)) as server:
        _break(db_path)  # before the probe's worker thread has opened its connection
        broken = httpx2.get(server.url.removesuffix("/mcp") + "/healthz")
    assert broken.status_code == 503
    assert broken.json() == {"status": "unavailable", "log": "unreachable"}
    assert f"/healthz: the log is unreachable: {db_path}: file is not a database" in (
        server.last_said
    )


async def test_an_internal_error_is_a_jsonrpc_error_and_one_traceback(db_path: Path) -> None:
    token = create_token(Path(f"{published(db_path)}.tokens.json"), "ada", ("writer",))
    with http_server(db_path) as server:
        async with http_agent(server.url, token) as agent:
            _break(db_path)
            with pytest.raises(MCPError) as failed:
                await agent.client.call_tool("search_nodes", {"query": "Ada"})
        said = server.said()
    assert failed.value.error.code == -32603
    assert failed.value.error.message == "internal error in search_nodes: EventLogError"
    [line] = [line for line in said.splitlines() if " ERROR " in line]  # one record
    assert line.endswith(" ERROR writegate.server: tool search_nodes failed for agent ada")
    assert said.count("sqlite3.DatabaseError: file is not a database") == 1  # one traceback
