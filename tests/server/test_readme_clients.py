"""The README's client and service sections, followed literally (issue 10, acceptance 2).

The commands and configurations are read out of README.md; only the placeholders are
put in (the log's path, this checkout's ``writegate``, the printed token, a free port),
then the commands run and the SDK's client connects as each configuration says, and
writes a node.
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
from tests.readme import blocks, commands, section
from tests.server.harness import WRITEGATE, free_port, wait_listening
from writegate.cli.config import load_settings

pytestmark = pytest.mark.anyio
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


async def _write_through(client: Client) -> dict[str, Any]:
    result = await client.call_tool("write_node", WRITE)
    assert not result.is_error, result
    assert result.structured_content is not None
    return dict(result.structured_content)


async def test_the_stdio_configuration_works_as_written(tmp_path: Path) -> None:
    text = section("### Connecting a client")
    fill = Placeholders(tmp_path / "memory.db", free_port())
    [init] = [c for c in commands(text) if "init" in c]
    subprocess.run(fill.command(init), cwd=ROOT, check=True, capture_output=True)
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
    text = section("### Connecting a client")
    port = free_port()
    fill = Placeholders(tmp_path / "memory.db", port)
    lines = commands(text)
    [init] = [c for c in lines if "init" in c]
    [create] = [c for c in lines if "token" in c]
    [serve] = [c for c in lines if "serve" in c and "--http" in c]
    subprocess.run(fill.command(init), cwd=ROOT, check=True, capture_output=True)
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
    finally:
        process.terminate()
        process.wait(timeout=10)
    stderr = process.stderr.read().decode() if process.stderr else ""
    assert written["seq"] == 2
    assert f"tokens: {tmp_path / 'memory.db'}.tokens.json (1 agent)" in stderr


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
    [unit] = blocks(text, "ini")
    [exec_start] = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    words = shlex.split(exec_start.removeprefix("ExecStart="))
    assert words[0].endswith("/writegate")
    parsed = subprocess.run(
        [WRITEGATE, *words[1:], "--help"], capture_output=True, text=True, check=False
    )
    assert parsed.returncode == 0, parsed.stderr
    assert "Serve the gate to agents over MCP" in parsed.stdout
