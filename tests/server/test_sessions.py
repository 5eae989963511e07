"""Streamable HTTP sessions are released (issue 13): the server's session map once only grew,
~1.6 KB a session. ``/metrics`` reports the sessions the SDK's session manager holds; a
session a client closes (its ``DELETE``) is gone from it, however many came before."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.server.conftest import published
from tests.server.harness import HttpServer, http_server
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.anyio
ACCEPT = "application/json, text/event-stream"
HELLO = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "leaver", "version": "1"}},
}  # fmt: skip


@pytest.fixture
def server(db_path: Path) -> Iterator[HttpServer]:
    with http_server(published(db_path), extra=("--metrics",)) as running:
        yield running


def held(server: HttpServer) -> int:
    text = httpx2.get(server.url.removesuffix("/mcp") + "/metrics").text
    found = re.search(r"^writegate_http_sessions (\S+)$", text, re.MULTILINE)
    assert found is not None, text
    return int(float(found.group(1)))


@asynccontextmanager
async def session(server: HttpServer, token: str, mode: str = "legacy") -> AsyncIterator[Client]:
    """An SDK client's session: opened by ``initialize`` (the 2025 wire), closed on exit."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(server.url, http_client=http), mode=mode) as client,
    ):
        yield client


async def test_closed_sessions_are_forgotten(server: HttpServer) -> None:
    token = create_token(Path(f"{server.db}.tokens.json"), "opener", ("reader",))
    assert held(server) == 0
    for _ in range(30):
        async with session(server, token) as client:
            await client.list_tools()
    assert held(server) == 0


async def test_open_sessions_are_counted_until_closed(server: HttpServer) -> None:
    token = create_token(Path(f"{server.db}.tokens.json"), "holder", ("reader",))
    async with AsyncExitStack() as stack:
        for _ in range(3):
            await stack.enter_async_context(session(server, token))
        assert held(server) == 3
    assert held(server) == 0


async def test_the_2026_wire_holds_no_session(server: HttpServer) -> None:
    token = create_token(Path(f"{server.db}.tokens.json"), "modern", ("reader",))
    async with session(server, token, mode="auto") as client:
        await client.list_tools()
        assert held(server) == 0


async def test_an_abandoned_session_is_forgotten_after_the_idle_timeout(db_path: Path) -> None:
    """A client that never closes its session (it crashed, or simply went away) holds it
    only until ``--session-idle-timeout`` seconds pass without a request of its own."""
    extra = ("--metrics", "--session-idle-timeout", "1")
    with http_server(published(db_path), extra=extra) as running:
        token = create_token(Path(f"{running.db}.tokens.json"), "leaver", ("reader",))
        opened = httpx2.post(
            running.url,
            json=HELLO,
            headers={"Authorization": f"Bearer {token}", "Accept": ACCEPT},
        )
        assert opened.headers["mcp-session-id"]  # held from here on, until it is idle
        for _ in range(600):  # a bound on liveness: 30 s, not a measure
            if held(running) == 0:
                break
            await anyio.sleep(0.05)
        assert held(running) == 0
