"""Defects found driving the installed server from outside (issue 10: B, C, F, G, 2, 3).

Each test drives ``writegate serve`` with the official SDK client (or raw lines where the
SDK would not send what an agent or a broken client might), and fails on the code
before the fix.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.conftest import person, state_of
from tests.server.conftest import published
from tests.server.harness import WRITEGATE, Served, http_server
from writegate.gate import Gate

pytestmark = pytest.mark.anyio
HANG = 20  # seconds: a guard against a hang, not a measure of speed


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


def _head(db: Path) -> Any:
    with Gate.open(db, readonly=True) as gate:
        return state_of(gate)


@pytest.mark.parametrize("depth", [50, 200])
async def test_deep_nesting_is_answered_at_once_and_appends_nothing(
    served: Served, depth: int
) -> None:
    before = _head(served.db)
    async with served.agent() as agent:
        with anyio.fail_after(HANG):
            out = await agent.call("write_node", person(properties={"deep": nested(depth)}))
        assert out.is_error
        assert out.data["error_code"] == "INVALID_ARGUMENT"
        with anyio.fail_after(HANG):  # and the server still answers
            ok = await agent.call("write_node", person())
        assert not ok.is_error
    after = _head(served.db)
    assert after[0][0] == before[0][0] + 1  # only the good write was appended


@pytest.mark.parametrize(
    ("properties", "limit"),
    [
        ({"notes": "x" * 5_000_000}, "max_value_bytes"),
        ({f"p{i}": i for i in range(10_000)}, "max_properties"),
    ],
)
async def test_oversized_writes_are_refused_with_their_own_code(
    served: Served, properties: dict[str, Any], limit: str
) -> None:
    before = _head(served.db)
    async with served.agent() as agent:
        with anyio.fail_after(HANG):
            out = await agent.call("write_node", person(properties=properties))
        assert out.is_error
        assert out.data["error_code"] == "LIMIT_EXCEEDED"
        assert out.data["details"]["limit"] == limit
        assert not (await agent.call("search_nodes", {"query": "Alice"})).is_error
    assert _head(served.db) == before


async def test_add_over_an_existing_node_is_refused(served_npc: Served) -> None:
    """Seed 001 §4.2: add_<type> does not merge; update_<type> is for changes."""
    entity = {"name": "Gandalf", "role": "Wizard", "status": "Active"}
    prov = {"source": "notes", "extraction_method": "manual"}
    async with served_npc.agent() as agent:
        first = await agent.call("add_npc", {"npc": entity, **prov})
        assert not first.is_error, first.data
        again = await agent.call("add_npc", {"npc": {**entity, "status": "Missing"}, **prov})
        assert again.is_error
        assert again.data["error_code"] == "NODE_ALREADY_EXISTS"
        assert "update_npc" in again.data["message"]  # the tool that changes it, by name
        assert "write_node" not in again.data["message"]
        assert "create_only" not in again.data["message"]
        changed = await agent.call(
            "update_npc", {"npc": {"name": "Gandalf", "status": "Missing"}, **prov}
        )
        assert not changed.is_error
        merged = await agent.call(
            "write_node",
            {
                "label": "Npc",
                "merge_keys": {"name": "Gandalf"},
                "properties": {"status": "Active"},
                **prov,
            },
        )
        assert not merged.is_error  # write_node keeps seed 000's merge


async def test_resources_are_right_on_the_first_request(served: Served) -> None:
    async with served.agent() as agent:  # no tools/list before
        listed = await agent.client.list_resources()
        uris = sorted(str(r.uri) for r in listed.resources)
        stats = await agent.client.read_resource("writegate://stats")
    assert uris == ["writegate://schema", "writegate://stats"]
    assert json.loads(stats.contents[0].text)["events"] == 1  # type: ignore[union-attr]


async def test_get_schema_on_a_log_without_one_is_a_clear_result(db_path: Path) -> None:
    Gate.open(db_path).close()
    served = Served("stdio", db_path)
    async with served.agent() as agent:
        out = await agent.call("get_schema", {})
    assert out.is_error
    assert out.data["error_code"] == "SCHEMA_SOURCE_UNAVAILABLE"
    assert "schema publish" in out.data["message"]


def test_serve_warns_when_the_log_has_no_schema(db_path: Path) -> None:
    Gate.open(db_path).close()
    done = subprocess.run(
        [WRITEGATE, "--db", str(db_path), "serve"],
        input="",
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )
    assert "warning: no schema to check writes against" in done.stderr
    assert f"writegate --db {db_path} schema publish FILE" in done.stderr


def test_an_unparseable_line_on_stdio_gets_a_parse_error(db_path: Path) -> None:
    published(db_path)
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        ),
        "this is { not json",
    ]
    done = subprocess.run(
        [WRITEGATE, "--db", str(db_path), "serve"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    errors = [r for r in replies if "error" in r]
    assert errors == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    ]


def test_a_wrong_host_is_forbidden_not_misdirected(db_path: Path) -> None:
    """Seed 002 §B.3: a disallowed Host or Origin is a 403."""
    with http_server(published(db_path)) as server:
        wrong_host = httpx2.post(server.url, headers={"Host": "evil.example"}, json={})
        wrong_origin = httpx2.post(server.url, headers={"Origin": "https://evil.example"}, json={})
    assert wrong_host.status_code == 403
    assert wrong_origin.status_code == 403
