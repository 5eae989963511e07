"""The suite's forked servers (``tests.forked``) end as the console script's processes do:
the same exit code and words for the same arguments, a signal passed on, and a relay killed
outright takes its server with it."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx2

from tests.forked import ZYGOTE
from tests.server.conftest import published
from tests.server.harness import WRITEGATE, http_server


def test_a_forked_command_exits_and_speaks_as_the_console_script(tmp_path: Path) -> None:
    words = ["--db", str(tmp_path / "missing.db"), "log"]
    real = subprocess.run(
        [WRITEGATE, *words], check=False, capture_output=True, text=True, cwd=tmp_path
    )
    forked = subprocess.run(
        [*ZYGOTE.command(), *words], check=False, capture_output=True, text=True, cwd=tmp_path
    )
    assert real.returncode != 0
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )


def test_a_signal_reaches_the_server_and_its_end_is_the_relays(db_path: Path) -> None:
    with http_server(published(db_path)) as server:
        # once it answers, it has taken SIGTERM over (before, the signal's default ends it)
        assert httpx2.get(server.url.removesuffix("/mcp") + "/healthz").status_code == 200
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=30) == 0
    assert "writegate MCP on http://" in server.last_said


def test_a_relay_killed_outright_takes_its_server_with_it(db_path: Path) -> None:
    with http_server(published(db_path)) as server:
        server.process.kill()
        server.process.wait()
        deadline = time.monotonic() + 10
        while _accepts(server.port):
            assert time.monotonic() < deadline, "the server outlived its relay"
            time.sleep(0.05)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True
