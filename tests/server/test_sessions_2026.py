"""What names an agent's session on MCP's 2026-07-28 wire, which has no Mcp-Session-Id
(issue 14): the client's W3C trace when it sends one, else a handle for the client
instance (its credential and declared info) — every event still names a session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import person
from tests.server.conftest import published
from tests.server.harness import Agent, HttpServer, http_agent, http_server
from writegate.eventlog import EventLog
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.anyio
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.fixture
def server(db_path: Path) -> Iterator[HttpServer]:
    with http_server(published(db_path)) as running:
        yield running


def sessions(db: Path | str) -> list[str | None]:
    with EventLog(db, create=False) as log:
        return [e.actor.session for e in log.read(after_seq=1).events]


@asynccontextmanager
async def traced_agent(url: str, token: str) -> AsyncIterator[Agent]:
    traceparent = f"00-{TRACE}-00f067aa0ba902b7-01"
    headers = {"Authorization": f"Bearer {token}", "traceparent": traceparent}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield Agent(client)


async def test_each_client_instance_is_named_without_a_session_header(server: HttpServer) -> None:
    tokens = {a: create_token(Path(f"{server.db}.tokens.json"), a, ("writer",)) for a in "ab"}
    async with http_agent(server.url, tokens["a"]) as a:  # the 2026-07-28 wire ("auto")
        for name in ("A1", "A2"):
            assert not (await a.call("write_node", person(name))).is_error
    async with http_agent(server.url, tokens["b"]) as b:
        assert not (await b.call("write_node", person("B1"))).is_error
    first, second, other = sessions(server.db)
    assert first is not None
    assert first.startswith("client:")
    assert first == second  # one client instance, one session
    assert other != first  # another agent is another session


async def test_a_w3c_trace_names_the_session(server: HttpServer) -> None:
    token = create_token(Path(f"{server.db}.tokens.json"), "t", ("writer",))
    async with traced_agent(server.url, token) as agent:
        assert not (await agent.call("write_node", person("T1"))).is_error
    assert sessions(server.db) == [f"trace:{TRACE}"]


async def test_the_legacy_wire_keeps_its_session_id(server: HttpServer) -> None:
    token = create_token(Path(f"{server.db}.tokens.json"), "l", ("writer",))
    async with http_agent(server.url, token, mode="legacy") as agent:
        assert not (await agent.call("write_node", person("L1"))).is_error
    [session] = sessions(server.db)
    assert session is not None
    assert len(session) == 32  # the Mcp-Session-Id the server minted
