"""The README's client section and the serving guide's service section, followed literally.

The commands and configurations are read out of the docs; only the placeholders are put in
(the log's path, this checkout's ``writegate``, the printed token, a free port), then the
commands run and the SDK's client — or the Inspector — connects as each one says, and
writes a node. Claude's own ``claude mcp add`` is not installed here: what it is told to
start (after ``--``), or where to connect with which header, is what is run.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import ROOT
from tests.readme import blocks, commands, lines, section
from tests.server.harness import WRITEGATE, free_port, wait_listening
from writegate.cli.config import load_settings

pytestmark = pytest.mark.anyio
CLIENTS = "## Connecting Claude, Cursor or the Inspector"
INSPECTOR = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-inspector"
WRITE = {
    "label": "Person",
    "merge_keys": {"name": "Ada Lovelace"},
    "properties": {"role": "engineer"},
    "source": "README",
    "extraction_method": "manual",
}


class Placeholders:
    def __init__(self, db: Path, port: int) -> None:
        self.values = {
            "/path/to/writegate/.venv/bin/writegate": WRITEGATE,
            "/path/to/memory.db": str(db),
            "8765": str(port),
        }

    def put(self, text: str) -> str:
        for placeholder, value in self.values.items():
            text = text.replace(placeholder, value)
        return text

    def command(self, words: list[str]) -> list[str]:
        return [WRITEGATE, *(self.put(w) for w in words[1:])]


def _first_log(db: Path) -> None:
    """The log the README's section made first (its ``init``, with ``db`` for ``memory.db``),
    which the clients' paths name."""
    [init] = [c for c in commands(section("## First log, first agent")) if "init" in c]
    assert init[1:3] == ["--db", "memory.db"]
    subprocess.run(
        [WRITEGATE, "--db", str(db), *init[3:]], cwd=ROOT, check=True, capture_output=True
    )


async def _write_through(client: Client) -> dict[str, Any]:
    result = await client.call_tool("write_node", WRITE)
    assert not result.is_error, result
    assert result.structured_content is not None
    return dict(result.structured_content)


async def test_the_stdio_configuration_works_as_written(tmp_path: Path) -> None:
    text = section(CLIENTS)
    fill = Placeholders(tmp_path / "memory.db", free_port())
    _first_log(tmp_path / "memory.db")
    [config] = [json.loads(fill.put(b)) for b in blocks(text, "json") if '"command"' in b]
    server = config["mcpServers"]["writegate"]
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=dict(os.environ)
    )
    async with Client(params) as client:
        written = await _write_through(client)
    assert written["label"] == "Person"
    assert written["seq"] == 2


async def test_the_http_configuration_works_as_written(tmp_path: Path) -> None:
    text = section(CLIENTS)
    port = free_port()
    fill = Placeholders(tmp_path / "memory.db", port)
    pasted = commands(text)
    [create] = [c for c in pasted if "token" in c]
    [serve] = [c for c in pasted if "serve" in c and "--http" in c]
    _first_log(tmp_path / "memory.db")
    made = subprocess.run(
        fill.command(create), cwd=ROOT, check=True, capture_output=True, text=True
    )
    token = made.stdout.strip()
    process = subprocess.Popen(fill.command(serve), cwd=ROOT, stderr=subprocess.PIPE)
    try:
        wait_listening(port, process)
        [config] = [json.loads(fill.put(b)) for b in blocks(text, "json") if '"url"' in b]
        server = config["mcpServers"]["writegate"]
        headers = {k: v.replace("wg_…", token) for k, v in server["headers"].items()}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(server["url"], http_client=http)
            async with Client(transport) as client:
                written = await _write_through(client)
        [claude] = [shlex.split(line) for line in lines(blocks(text, "sh")[2])]
        assert claude[:4] == ["claude", "mcp", "add", "--transport"]
        [url] = [word for word in claude if word.startswith("http://")]
        name, value = claude[claude.index("--header") + 1].replace("wg_…", token).split(": ")
        async with httpx2.AsyncClient(headers={name: value}, timeout=30) as http:
            transport = streamable_http_client(fill.put(url), http_client=http)
            async with Client(transport) as client:
                tools = {tool.name for tool in (await client.list_tools()).tools}
        assert "write_node" in tools
    finally:
        process.terminate()
        process.wait(timeout=10)
    stderr = process.stderr.read().decode() if process.stderr else ""
    assert written["seq"] == 2
    assert f"tokens: {tmp_path / 'memory.db'}.tokens.json (1 agent)" in stderr


async def test_the_claude_code_commands_work_as_written(tmp_path: Path) -> None:
    """``claude mcp add writegate -- COMMAND``: COMMAND, placeholders put in, is a stdio
    server the SDK's client writes through."""
    text = section(CLIENTS)
    fill = Placeholders(tmp_path / "memory.db", free_port())
    _first_log(tmp_path / "memory.db")
    [claude] = [shlex.split(line) for line in lines(blocks(text, "sh")[0])]
    assert claude[:4] == ["claude", "mcp", "add", "writegate"]
    command = [fill.put(word) for word in claude[claude.index("--") + 1 :]]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params) as client:
        written = await _write_through(client)
    assert written["seq"] == 2


def test_the_inspector_command_works_as_written(tmp_path: Path) -> None:
    """The Inspector's command, run by the pinned Inspector of tests/peers (``npx`` would
    fetch the same version), lists the tools an agent sees."""
    fill = Placeholders(tmp_path / "memory.db", free_port())
    _first_log(tmp_path / "memory.db")
    [words] = [shlex.split(line) for line in lines(blocks(section(CLIENTS), "sh")[3])]
    assert words[:2] == ["npx", "@modelcontextprotocol/inspector@0.15.0"]
    assert INSPECTOR.exists(), "run `make test` (it installs tests/peers with npm ci)"
    done = subprocess.run(
        [str(INSPECTOR), *(fill.put(word) for word in words[2:])],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "write_node" in {tool["name"] for tool in json.loads(done.stdout)["tools"]}


def test_the_service_configuration_parses(tmp_path: Path) -> None:
    text = section("## Running writegate as a service")
    [toml] = blocks(text, "toml")
    config = tmp_path / "writegate.toml"
    config.write_text(toml)
    settings = load_settings(config)
    assert settings.serve.http
    assert settings.serve.public_hosts == ["memory.example.org"]
    assert settings.limits is not None
    assert settings.limits.max_depth == 16
    assert settings.rejections.max_age_days == 90
    [unit] = blocks(text, "ini")
    [exec_start] = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    words = shlex.split(exec_start.removeprefix("ExecStart="))
    assert words[0].endswith("/writegate")
    parsed = subprocess.run(
        [WRITEGATE, *words[1:], "--help"], capture_output=True, text=True, check=False
    )
    assert parsed.returncode == 0, parsed.stderr
    assert "Serve the gate to agents over MCP" in parsed.stdout
