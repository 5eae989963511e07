"""Identity, authentication, host checks and policy at the MCP boundary."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import FIXTURES, person, seed_document
from tests.server.conftest import published
from tests.server.harness import HttpServer, Served, http_agent, http_server
from writegate.eventlog import EventLog
from writegate.gate import Gate
from writegate.gate.server.policy import DEFAULT_POLICY_FILE
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.anyio

WRITE_TOOLS = {
    "write_node",
    "write_relationship",
    "delete_node",
    "delete_relationship",
    "write_batch",
}
ACCEPT = "application/json, text/event-stream"


def head(db: Path | str) -> tuple[int, str]:
    with EventLog(db, create=False) as log:
        return log.head()


@pytest.fixture
def server(db_path: Path) -> Iterator[HttpServer]:
    with http_server(published(db_path)) as running:
        yield running


def token(db: Path | str, agent: str, *roles: str) -> str:
    return create_token(Path(str(db) + ".tokens.json"), agent, roles)


def rpc(method: str, params: dict[str, Any], id_: int | None = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        message["id"] = id_
    return message


def initialize() -> dict[str, Any]:
    return rpc(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"},
        },
    )


@contextmanager
def raw_session(server: HttpServer, bearer: str) -> Iterator[tuple[httpx2.Client, dict[str, str]]]:
    """A handshake-era session spoken by hand, to compare response bytes."""
    with httpx2.Client(timeout=30) as client:
        headers = {"Authorization": f"Bearer {bearer}", "Accept": ACCEPT}
        response = client.post(server.url, json=initialize(), headers=headers)
        assert response.status_code == 200, response.text
        headers["mcp-session-id"] = response.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = "2025-11-25"
        client.post(server.url, json=rpc("notifications/initialized", {}, None), headers=headers)
        yield client, headers


def test_no_token_or_a_bad_token_is_401_before_any_tool_runs(server: HttpServer) -> None:
    before = head(server.db)
    call = rpc("tools/call", {"name": "write_node", "arguments": person()})
    for headers in ({}, {"Authorization": "Bearer wg_not-a-real-token"}, {"Authorization": "x"}):
        response = httpx2.post(server.url, json=call, headers={"Accept": ACCEPT, **headers})
        assert response.status_code == 401
    assert head(server.db) == before


def test_wrong_host_or_origin_is_rejected(server: HttpServer) -> None:
    bearer = token(server.db, "alice", "writer")
    base = {"Authorization": f"Bearer {bearer}", "Accept": ACCEPT}
    evil_host = httpx2.post(server.url, json=initialize(), headers={**base, "Host": "evil.example"})
    assert evil_host.status_code in (403, 421)
    evil_origin = httpx2.post(
        server.url, json=initialize(), headers={**base, "Origin": "http://evil.example"}
    )
    assert evil_origin.status_code == 403
    fine = httpx2.post(server.url, json=initialize(), headers=base)
    assert fine.status_code == 200


def test_denied_call_is_byte_identical_to_an_unknown_tool(server: HttpServer) -> None:
    with raw_session(server, token(server.db, "rita", "reader")) as (client, headers):
        bodies = {}
        for name in ("write_node", "no_such_tool"):
            call = rpc("tools/call", {"name": name, "arguments": person()}, id_=7)
            response = client.post(server.url, json=call, headers=headers)
            assert response.status_code == 200
            bodies[name] = response.content
    assert b"-32602" in bodies["no_such_tool"]
    assert bodies["write_node"].replace(b"write_node", b"no_such_tool") == bodies["no_such_tool"]


async def test_reader_sees_no_write_tools_and_cannot_call_them(server: HttpServer) -> None:
    before = head(server.db)
    async with http_agent(server.url, token(server.db, "rita", "reader")) as reader:
        names = set(await reader.tool_names())
        assert names.isdisjoint(WRITE_TOOLS | {"refresh_schema_cache"})
        assert not any(n.startswith(("add_", "update_", "delete_")) for n in names)
        assert {"search_nodes", "open_nodes", "node_history", "get_schema"} <= names
        for name in ("write_node", "add_person", "no_such_tool"):
            with pytest.raises(MCPError) as denied:
                await reader.call(name, person())
            assert denied.value.error.code == -32602
            assert denied.value.error.message == f"Unknown tool: {name}"
    assert head(server.db) == before


async def test_a_tool_argument_cannot_claim_another_agent(served: Served) -> None:
    async with served.agent("alice") as alice:
        for claim in ({"agent": "mallory"}, {"actor": {"agent": "mallory"}}):
            out = await alice.call("write_node", {**person(), **claim})
            assert out.is_error
            assert out.data["error_code"] == "INVALID_ARGUMENT"
        written = await alice.call("write_node", person(properties={"agent": "mallory", "age": 3}))
    with EventLog(served.db, create=False) as log:
        events = log.read(after_seq=1, limit=100).events
    assert [e.seq for e in events] == [written.data["seq"]]
    assert {e.actor.agent for e in events} == {"alice"}


def test_agent_ids_from_tokens_and_sessions_are_recorded(server: HttpServer) -> None:
    with raw_session(server, token(server.db, "bob", "writer")) as (client, headers):
        call = rpc("tools/call", {"name": "write_node", "arguments": person("S")}, id_=3)
        assert client.post(server.url, json=call, headers=headers).status_code == 200
    with EventLog(server.db, create=False) as log:
        event = log.read(after_seq=1).events[-1]
    assert event.actor.agent == "bob"
    assert event.actor.session == headers["mcp-session-id"]
    assert event.actor.transport == "http"


@pytest.fixture
def event_schema_db(db_path: Path) -> Path:
    document = seed_document()
    document["nodes"]["Event"] = {"merge_keys": ["name"], "required": ["name"]}
    document["relationships"]["ATTENDED"] = {"from": ["Person"], "to": ["Event"]}
    with Gate.open(db_path) as gate:
        assert gate.publish_schema(document).status == "published"
    return db_path


async def test_policy_can_restrict_an_agent_to_one_label(event_schema_db: Path) -> None:
    policies = (
        "--policy",
        str(DEFAULT_POLICY_FILE),
        "--policy",
        str(FIXTURES / "policies-event-writer.cedar"),
    )
    with http_server(event_schema_db, extra=policies) as server:
        bot = token(server.db, "calendar-bot", "writer")
        async with http_agent(server.url, bot) as agent:
            assert "write_node" in await agent.tool_names()  # the tool is visible...
            event = await agent.call("write_node", person("Launch", label="Event", properties={}))
            assert not event.is_error, event.data
            before = head(server.db)
            denied = await agent.call("write_node", person("Alice"))  # ...but not for :Person
            assert denied.is_error
            assert denied.data["error_code"] == "POLICY_DENIED"
            assert denied.data["details"]["denied"] == ["Label::Person"]
            # a stub endpoint is a node written too, so it is checked the same way
            attended = await agent.call(
                "write_relationship",
                {
                    "type": "ATTENDED",
                    "from_label": "Person",
                    "from_keys": {"name": "Zed"},
                    "to_label": "Event",
                    "to_keys": {"name": "Launch"},
                    "endpoint_policy": "merge_endpoints",
                    "source": "calendar",
                    "extraction_method": "api",
                },
            )
            assert attended.data["error_code"] == "POLICY_DENIED"
            assert head(server.db) == before
        async with http_agent(server.url, token(server.db, "alice", "writer")) as alice:
            assert not (await alice.call("write_node", person("Alice"))).is_error


def test_a_public_bind_without_public_host_checks_origins_not_hosts(db_path: Path) -> None:
    extra = ("--host", "0.0.0.0", "--allow-origin", "https://app.example")
    with http_server(published(db_path), extra=extra) as public:
        base = {"Authorization": f"Bearer {token(public.db, 'alice', 'writer')}", "Accept": ACCEPT}
        any_host = httpx2.post(
            public.url, json=initialize(), headers={**base, "Host": "mem.example"}
        )
        assert any_host.status_code == 200
        listed = httpx2.post(
            public.url, json=initialize(), headers={**base, "Origin": "https://app.example"}
        )
        assert listed.status_code == 200
        evil = httpx2.post(public.url, json=initialize(), headers={**base, "Origin": "http://evil"})
        assert evil.status_code == 403
        anonymous = httpx2.post(public.url, json=initialize(), headers={"Accept": ACCEPT})
        assert anonymous.status_code == 401
