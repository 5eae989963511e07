"""The operator's day (issue 10): health, metrics, log lines, settings, a taken port."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from tests.conftest import person
from tests.server.conftest import published
from tests.server.harness import WRITEGATE, HttpServer, free_port, http_agent, http_server
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.anyio


def _stderr(server: HttpServer) -> str:
    return server.said()


def test_healthz_needs_no_token_and_says_what_is_ready(db_path: Path) -> None:
    with http_server(published(db_path)) as server:
        base = server.url.removesuffix("/mcp")
        health = httpx2.get(f"{base}/healthz")
        unauthorised = httpx2.post(server.url, json={})
        metrics = httpx2.get(f"{base}/metrics")
    assert health.status_code == 200
    body = health.json()
    assert body["status"] == "ok"
    assert body["head_seq"] == 1
    assert body["schema_loaded"] is True
    assert unauthorised.status_code == 401
    assert metrics.status_code == 404  # /metrics only when enabled


async def test_metrics_count_calls_by_tool_agent_and_outcome(db_path: Path) -> None:
    token = create_token(Path(f"{db_path}.tokens.json"), "bob", ("writer",))
    with http_server(published(db_path), extra=("--metrics",)) as server:
        async with http_agent(server.url, token) as agent:
            assert not (await agent.call("write_node", person())).is_error
            assert (await agent.call("write_node", person(label="Nope Nope"))).is_error
        text = httpx2.get(server.url.removesuffix("/mcp") + "/metrics").text
    assert 'writegate_tool_calls_total{agent="bob",outcome="ok",tool="write_node"} 1.0' in text
    assert (
        'writegate_tool_calls_total{agent="bob",outcome="rejected",tool="write_node"} 1.0' in text
    )
    assert 'writegate_rejections_total{agent="bob",code="INVALID_IDENTIFIER"} 1.0' in text
    assert 'writegate_tool_seconds_count{tool="write_node"} 2.0' in text
    assert "writegate_log_head_seq 2.0" in text


async def test_json_log_lines_name_the_agent_and_code_of_a_refusal(db_path: Path) -> None:
    token = create_token(Path(f"{db_path}.tokens.json"), "carol", ("writer",))
    extra = ("--log-format", "json", "--log-level", "info")
    with http_server(published(db_path), extra=extra) as server:
        async with http_agent(server.url, token) as agent:
            await agent.call("write_node", person(extraction_method="vibes"))
    lines = [json.loads(line) for line in _stderr(server).splitlines() if line.startswith("{")]
    refused = [line for line in lines if line["message"].startswith("rejected write_node")]
    assert refused
    assert "carol" in refused[0]["message"]
    assert "INVALID_EXTRACTION_METHOD" in refused[0]["message"]
    assert refused[0]["levelname"] == "INFO"


def test_a_taken_port_is_one_line_before_any_banner(db_path: Path) -> None:
    published(db_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [WRITEGATE, "--db", str(db_path), "serve", "--http", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]


def test_every_serve_option_comes_from_the_config_file_or_the_environment(
    db_path: Path, tmp_path: Path
) -> None:
    port = free_port()
    config = tmp_path / "writegate.toml"
    config.write_text(f"[serve]\nhttp = true\nport = {port}\nmetrics = true\n")
    env = {**os.environ, "WRITEGATE_CONFIG": str(config), "WRITEGATE_SERVE__TOOLS": "generic"}
    published(db_path)
    process = subprocess.Popen(
        [WRITEGATE, "--db", str(db_path), "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(200):
            try:
                health = httpx2.get(f"http://127.0.0.1:{port}/healthz")
                break
            except httpx2.TransportError:
                process.poll()
                assert process.returncode is None, process.stderr.read() if process.stderr else ""
                time.sleep(0.05)
        metrics = httpx2.get(f"http://127.0.0.1:{port}/metrics")
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert health.status_code == 200
    assert metrics.status_code == 200
