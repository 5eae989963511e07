"""What ``serve --http`` says when it starts: where it listens, which tokens file it reads and
how many agents hold a token (warning at none); in JSON logs every line on stderr is a JSON
object — the banner and the warnings too — and none carries terminal colour codes."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import httpx2

from tests.server.conftest import published
from tests.server.harness import (
    WRITEGATE,
    HttpServer,
    announced_port,
    http_server,
    stop,
    written_so_far,
)
from writegate.gate import Gate
from writegate.gate.server.tokens import create_token


def _started(server: HttpServer) -> None:
    """Once it answers, it has said what it says at start (it binds before it speaks)."""
    assert httpx2.get(server.url.removesuffix("/mcp") + "/healthz").status_code == 200


def test_serve_warns_when_no_agent_holds_a_token(db_path: Path) -> None:
    with http_server(published(db_path)) as server:
        _started(server)
    tokens = f"{db_path}.tokens.json"
    assert server.last_said.splitlines()[:2] == [
        f"writegate MCP on http://127.0.0.1:{server.port}/mcp; tokens: {tokens} (0 agents)",
        "warning: no agent holds a token, so every request is refused (401): "
        f"writegate --db {db_path} token create AGENT --role writer",
    ]


def test_port_zero_serves_on_a_free_port_it_names(db_path: Path) -> None:
    """A port picked before the server binds it can be taken by then (tests beside each other
    did); with ``--port 0`` the system picks while binding, and the banner names its pick."""
    published(db_path)
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [WRITEGATE, "--db", str(db_path), "serve", "--http", "--port", "0"], stderr=stderr
        )
        try:
            port = announced_port(process, lambda: written_so_far(stderr))
            assert port != 0
            assert httpx2.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
        finally:
            stop(process)


def test_serve_counts_the_agents_holding_a_token(db_path: Path) -> None:
    create_token(Path(f"{published(db_path)}.tokens.json"), "ada", ("writer",))
    with http_server(db_path) as server:
        _started(server)
    assert server.last_said.splitlines()[0].endswith("(1 agent)")
    assert "warning" not in server.last_said


def test_json_logs_are_json_lines_from_the_first(db_path: Path) -> None:
    Gate.open(db_path).close()  # no schema: a warning at start
    extra = ("--log-format", "json", "--log-level", "info", "--access-log")
    with http_server(db_path, extra=extra) as server:
        _started(server)
    lines = server.last_said.splitlines()
    records = [json.loads(line) for line in lines]  # every line
    said = [(r["levelname"], r["message"].split(" (")[0].split(";")[0]) for r in records]
    assert said[:3] == [
        ("WARNING", "no schema to check writes against"),
        ("INFO", f"writegate MCP on http://127.0.0.1:{server.port}/mcp"),
        ("WARNING", "no agent holds a token, so every request is refused"),
    ]
    assert any(r["name"] == "uvicorn.access" and "/healthz" in r["message"] for r in records)
    assert any(r["message"].startswith("Started server process") for r in records)
    for record in records:
        assert "color_message" not in record
        assert "\x1b" not in json.dumps(record, ensure_ascii=False)


def test_json_logs_say_a_log_that_cannot_be_opened_as_json(tmp_path: Path) -> None:
    not_a_log = tmp_path / "notes.db"
    not_a_log.write_text("hello\n")
    done = subprocess.run(
        [WRITEGATE, "--db", str(not_a_log), "serve", "--log-format", "json"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    [record] = [json.loads(line) for line in done.stderr.splitlines()]
    assert (record["levelname"], record["message"]) == (
        "ERROR",
        f"{not_a_log}: file is not a database",
    )
