"""Seed 001's dynamic tools follow the schema: a refresh that adds a label adds its tools and
tells connected clients, on both protocol eras and both transports."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import pytest

from tests.conftest import seed_document
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
        return stdio_agent(served.db, "schema-admin", ("writer",), mode=mode)
    return http_agent(served.url, served.token("schema-admin", ("writer",)), mode=mode)


async def _refresh_and_wait(agent: Agent, db: Path) -> list[str]:
    assert "add_event" not in await agent.tool_names()
    publish_event_label(db)
    refreshed = await agent.call("refresh_schema_cache", {})
    assert refreshed.data["status"] == "refreshed"
    return await agent.tool_names()


async def test_legacy_client_gets_list_changed_notification(served: Served) -> None:
    async with _connect(served, "legacy") as agent:
        names = await _refresh_and_wait(agent, served.db)
        with anyio.fail_after(10):
            while "notifications/tools/list_changed" not in agent.notifications:
                await anyio.sleep(0.05)
    assert {"add_event", "update_event", "delete_event"} <= set(names)


async def test_modern_client_gets_tools_changed_event_on_its_listen_stream(served: Served) -> None:
    async with _connect(served, "auto") as agent:
        assert agent.client.protocol_version >= "2026-07-28"
        async with agent.client.listen(tools_list_changed=True) as subscription:
            names = await _refresh_and_wait(agent, served.db)
            with anyio.fail_after(10):
                event = await subscription.__anext__()
    assert type(event).__name__ == "ToolsListChanged"
    assert {"add_event", "update_event", "delete_event"} <= set(names)
