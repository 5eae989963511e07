"""``writegate serve`` started by hand in a terminal (a real pseudo-terminal here): it says in
one line on stderr what it is waiting for, answers a JSON-RPC line typed at it, and Ctrl-C
stops it (it said nothing, and Ctrl-C left it waiting for a line that never came)."""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import termios
from pathlib import Path

from tests.server.conftest import published
from tests.server.harness import WRITEGATE

BOUND = 60.0  # seconds: a bound on liveness (a server that hangs fails), not a measure


def _read_until(master: int, wanted: bytes, process: subprocess.Popen[bytes]) -> bytes:
    """What the terminal shows, up to and including ``wanted`` (or all of it, if the server
    exits or shows nothing more for ``BOUND`` seconds)."""
    shown = b""
    while wanted not in shown:
        ready, _, _ = select.select([master], [], [], BOUND)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the server closed the terminal's last descriptor
            break
        if not chunk:
            break
        shown += chunk
    return shown


def _take_the_terminal() -> None:
    """As a shell starts a job in the foreground: the terminal is its controlling one, and
    Ctrl-C's signal has its default meaning (a runner started in the background, as CI
    starts the suite, passes SIGINT on ignored, and Python then keeps it ignored)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_in_a_terminal_serve_says_what_it_waits_for_and_ctrl_c_stops_it(db_path: Path) -> None:
    master, terminal = os.openpty()
    process = subprocess.Popen(
        [WRITEGATE, "--db", str(published(db_path)), "serve"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        start_new_session=True,  # the terminal is its controlling one: Ctrl-C signals it
        preexec_fn=_take_the_terminal,  # noqa: PLW1509 - one ioctl, before exec
    )
    os.close(terminal)
    try:
        banner = _read_until(master, b"Ctrl-C", process)
        assert b"writegate MCP on stdio" in banner, banner
        assert banner.count(b"\n") <= 1, banner
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "by-hand", "version": "0"},
            },
        }
        os.write(master, json.dumps(hello).encode() + b"\n")
        answer = _read_until(master, b"serverInfo", process)
        assert b'"serverInfo":{"name":"writegate"' in answer, answer
        os.write(master, b"\x03")  # Ctrl-C, as the terminal sends it
        assert process.wait(timeout=BOUND) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
