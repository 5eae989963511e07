"""Seed 001's dynamic tools follow the schema: a refresh that adds a label adds its tools and
tells connected clients, on both protocol eras and both transports."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import pytest

from tests.conftest import seed_document
from tests.server.conftest import ALL_TOOLS, published
from tests.server.harness import Agent, Served, http_agent, stdio_agent
from writegate.gate import Gate

pytestmark = pytest.mark.anyio


def publish_event_label(db: Path) -> None:
    document = seed_document()
    document["nodes"]["Event"] = {"merge_keys": ["name"], "required": ["name"]}
    with Gate.open(db) as operator:
        assert operator.publish_schema(document).status == "published"


def _connect(served: Served, mode: str) -> AbstractAsyncContextManager[Agent]:
    if served.transport == "stdio":
        return stdio_agent(served.db, "schema-admin", ("writer",), mode=mode, extra=served.extra)
    return http_agent(served.url, served.token("schema-admin", ("writer",)), mode=mode)


async def _refresh_and_wait(agent: Agent, db: Path) -> list[str]:
    assert "add_event" not in await agent.tool_names()
    publish_event_label(db)
    refreshed = await agent.call("refresh_schema_cache", {})
    assert refreshed.data["status"] == "refreshed"
    return await agent.tool_names()


async def test_legacy_client_gets_list_changed_notification(served_labels: Served) -> None:
    served = served_labels
    async with _connect(served, "legacy") as agent:
        names = await _refresh_and_wait(agent, served.db)
        with anyio.fail_after(10):
            while "notifications/tools/list_changed" not in agent.notifications:
                await anyio.sleep(0.05)
    assert {"add_event", "update_event", "delete_event"} <= set(names)


async def test_modern_client_gets_tools_changed_event_on_its_listen_stream(
    served_labels: Served,
) -> None:
    served = served_labels
    async with _connect(served, "auto") as agent:
        assert agent.client.protocol_version >= "2026-07-28"
        async with agent.client.listen(tools_list_changed=True) as subscription:
            names = await _refresh_and_wait(agent, served.db)
            with anyio.fail_after(10):
                event = await subscription.__anext__()
    assert type(event).__name__ == "ToolsListChanged"
    assert {"add_event", "update_event", "delete_event"} <= set(names)


async def _told(agent: Agent) -> None:
    with anyio.fail_after(10):
        while "notifications/tools/list_changed" not in agent.notifications:
            await anyio.sleep(0.05)


@pytest.fixture
def over_http(db_path: Path) -> Iterator[Served]:
    """Seed 000's schema served over HTTP in reject mode: a label the schema lacks is refused."""
    s = Served("http", published(db_path), ALL_TOOLS)
    s.env = {"WRITE_GATE_UNKNOWN_LABEL_POLICY": "reject"}
    yield s
    s.close()


async def test_every_open_session_is_told_when_another_refreshes(over_http: Served) -> None:
    """Agent A only listens (its GET stream open, no request since it listed the tools);
    agent B refreshes after a publish: A is told too, not only the session that refreshed."""
    url = over_http.url
    a_token = over_http.token("watcher", ("writer",))
    b_token = over_http.token("schema-admin", ("writer",))
    async with (
        http_agent(url, a_token, mode="legacy") as a,
        http_agent(url, b_token, mode="legacy") as b,
    ):
        assert "add_event" not in await a.tool_names()
        publish_event_label(over_http.db)
        assert (await b.call("refresh_schema_cache", {})).data["status"] == "refreshed"
        await _told(a)
        assert "add_event" in await a.tool_names()


async def test_open_sessions_are_told_when_a_write_finds_a_newer_schema(over_http: Served) -> None:
    """No refresh at all: the server learns of the schema another process published when a
    write meets it in the log — a write its old schema refused, in reject mode — and tells
    every session its tools changed."""
    url = over_http.url
    async with (
        http_agent(url, over_http.token("watcher", ("writer",)), mode="legacy") as a,
        http_agent(url, over_http.token("writer-b", ("writer",)), mode="legacy") as b,
    ):
        assert "add_event" not in await a.tool_names()
        publish_event_label(over_http.db)
        written = await b.call(
            "write_node",
            {
                "label": "Event",
                "merge_keys": {"name": "Launch"},
                "source": "test",
                "extraction_method": "manual",
                "reliability": 0.9,
            },
        )
        assert written.data["label"] == "Event", written
        await _told(a)
        assert "add_event" in await a.tool_names()


async def test_a_tool_a_schema_published_elsewhere_adds_is_found_on_first_call(
    over_http: Served,
) -> None:
    """``add_event`` is not in this server's catalog until it loads the new schema: an unknown
    tool is looked up again once the log's schema has moved, before it is refused."""
    url = over_http.url
    async with (
        http_agent(url, over_http.token("watcher", ("writer",)), mode="legacy") as a,
        http_agent(url, over_http.token("writer-b", ("writer",)), mode="legacy") as b,
    ):
        assert "add_event" not in await b.tool_names()
        publish_event_label(over_http.db)
        added = await b.call(
            "add_event",
            {
                "event": {"name": "Launch"},
                "source": "test",
                "extraction_method": "manual",
                "reliability": 0.9,
            },
        )
        assert not added.is_error, added
        await _told(a)
