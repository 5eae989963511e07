"""A call nested deeper than any JSON parser on the way takes gets its own answer — the
gate's ``INVALID_ARGUMENT``, with its request id — on every wire: stdio (where even orjson
gives up past 1,024 levels), HTTP on the 2025-06-18 protocol (whose SDK parser stops at
~250) and on the 2026 wire; and the server keeps answering."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.conftest import person
from tests.server.conftest import published
from tests.server.harness import WRITEGATE, http_agent, http_server
from writegate.gate.server.nesting import cut
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.anyio
HANG = 30  # seconds: a guard against a hang, not a measure of speed
DEPTHS = [200, 1_000, 5_000, 100_000]


def deep_json(depth: int) -> str:
    return '{"a":' * depth + '"x"' + "}" * depth


def call_line(request_id: int, depth: int) -> str:
    arguments = json.dumps(person())[:-1] + f', "properties": {{"deep": {deep_json(depth)}}}}}'
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "write_node", "arguments": {arguments}}}}}'
    )


def _rejection(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    assert result["isError"] is True
    content: dict[str, Any] = result["structuredContent"]
    return content


def test_stdio_answers_every_deep_call_with_its_own_id(db_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "deep", "version": "1"},
        },
    }
    lines = [json.dumps(initialize), '{"jsonrpc": "2.0", "method": "notifications/initialized"}']
    lines += [call_line(i, depth) for i, depth in enumerate(DEPTHS, start=1)]
    good = {"name": "write_node", "arguments": person()}
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": good}))
    done = subprocess.run(
        [WRITEGATE, "--db", str(published(db_path)), "serve"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=HANG,
        check=True,
    )
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    assert sorted(replies) == [0, 1, 2, 3, 4, 99]
    for i in range(1, len(DEPTHS) + 1):
        refused = _rejection(replies[i])
        assert refused["error_code"] == "INVALID_ARGUMENT"
        assert refused["details"]["limit"] == "max_depth"
    assert replies[99]["result"]["structuredContent"]["status"] == "written"


class LegacyClient:
    """Raw 2025-06-18 Streamable HTTP: the SDK's client cannot even encode these calls."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "deep", "version": "1"},
            },
        }
        opened = httpx2.post(url, headers=self.headers, json=init, timeout=HANG)
        self.headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = "2025-06-18"
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        httpx2.post(url, headers=self.headers, json=note, timeout=HANG)

    def post(self, body: str) -> tuple[int, dict[str, Any]]:
        response = httpx2.post(self.url, headers=self.headers, content=body, timeout=HANG)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
        return response.status_code, json.loads(text)


def test_http_on_the_2025_wire_answers_deep_calls_as_the_gate_does(db_path: Path) -> None:
    token = create_token(Path(f"{published(db_path)}.tokens.json"), "deep", ("writer",))
    with http_server(db_path) as server:
        client = LegacyClient(server.url, token)
        answers = [client.post(call_line(i, depth)) for i, depth in enumerate(DEPTHS, start=1)]
        good = {"name": "write_node", "arguments": person()}
        ok = client.post(
            json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": good})
        )
    for i, (status, reply) in enumerate(answers, start=1):
        assert status == 200, reply
        assert reply["id"] == i
        assert _rejection(reply)["error_code"] == "INVALID_ARGUMENT"
    assert ok[1]["result"]["structuredContent"]["status"] == "written"


def test_http_on_the_2026_wire_answers_deep_calls_as_the_gate_does(db_path: Path) -> None:
    token = create_token(Path(f"{published(db_path)}.tokens.json"), "deep", ("writer",))
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "write_node",
    }
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    opening = f'"params": {{"_meta": {json.dumps(meta)}, '
    with http_server(db_path) as server:
        answers = [
            httpx2.post(
                server.url,
                headers=headers,
                content=call_line(i, depth).replace('"params": {', opening, 1),
                timeout=HANG,
            )
            for i, depth in enumerate(DEPTHS, start=1)
        ]
    for i, answer in enumerate(answers, start=1):
        assert answer.status_code == 200, answer.text
        reply = answer.json()
        assert reply["id"] == i
        assert _rejection(reply)["error_code"] == "INVALID_ARGUMENT"


def test_http_answers_a_body_it_cannot_read_with_a_parse_error(db_path: Path) -> None:
    token = create_token(Path(f"{published(db_path)}.tokens.json"), "deep", ("writer",))
    with http_server(db_path) as server:
        client = LegacyClient(server.url, token)
        unreadable = [
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {',
            call_line(2, 1_000)[:-1],  # deep, and never closed
        ]
        answers = [client.post(body) for body in unreadable]
    for status, reply in answers:
        assert status == 400, reply
        assert (reply["id"], reply["error"]["code"]) == (None, -32700)


async def test_http_sdk_clients_on_both_wires_get_invalid_argument(db_path: Path) -> None:
    token = create_token(Path(f"{published(db_path)}.tokens.json"), "deep", ("writer",))
    nested: Any = "x"
    for _ in range(200):
        nested = {"a": nested}
    with http_server(db_path) as server:
        for mode in ("legacy", "auto"):
            async with http_agent(server.url, token, mode=mode) as agent:
                with anyio.fail_after(HANG):
                    out = await agent.call("write_node", person(properties={"deep": nested}))
                assert out.is_error, mode
                assert out.data["error_code"] == "INVALID_ARGUMENT", mode


def test_the_cut_keeps_the_call_and_ignores_brackets_in_strings() -> None:
    brackets = "[{" * 200
    line = (
        f'{{"id": 7, "text": "{brackets}\\"{brackets}", '
        f'"params": {{"name": "write_node", "deep": {deep_json(500)}}}, "after": [1]}}'
    ).encode()
    shallow = cut(line, 10)
    assert shallow is not None
    message = json.loads(shallow)
    assert (message["id"], message["params"]["name"], message["after"]) == (7, "write_node", [1])
    assert message["text"] == f'{brackets}"{brackets}'
    value, depth = message["params"]["deep"], 3  # the message's 3rd level
    while isinstance(value["a"], dict):
        value, depth = value["a"], depth + 1
    assert (depth, value["a"]) == (10, None)  # kept to 10 levels, the 11th is null
    assert cut(f'{{"s": "{brackets}"}}'.encode(), 10) is None  # only strings are that "deep"
    assert cut(b'{"a": [[[[[[[[[[[[[[[[ "unterminated', 4) is None
