"""``writegate`` servers forked from a process that has imported writegate already.

A server the suite starts spends about 1.3 s of CPU importing the gate and the MCP SDK
before it answers anything — over three hundred servers a run, a third of the suite's CPU.
A zygote per test process imports them once; each server is then a fork of it, so what a
test meets is still a process of its own, spoken to over real pipes or a real socket by the
SDK's client, that parses its arguments and opens its log as a new process does.

What a test starts is ``tests/forked_relay.py``: it hands the zygote its streams, arguments,
environment and folder, passes on the signals it is sent, and exits as the server did. A
test about the process itself — its pid or threads in ``/proc``, a SIGKILL or SIGSTOP, the
installed script's start-up — passes ``command=WRITEGATE`` to the harness and gets a fresh
interpreter. Nothing is preloaded that starts a thread: a fork copies only the thread that
forks.

usage (the zygote; ``ZYGOTE.command()`` starts it): python -m tests.forked SOCKET
"""

from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

RELAY = Path(__file__).with_name("forked_relay.py")
PRELOADED = (
    "writegate.cli.main",
    "writegate.cli.serve",
    "writegate.cli.config",
    "writegate.cli.job_kinds",
    "writegate.cli.log_jobs",
    "writegate.cli.stores",
    "writegate.gate.jobs",
    "writegate.gate.desk",
    "writegate.gate.desk.sessions",
    "writegate.gate.server.app",
    "writegate.gate.server.http",
    "writegate.gate.server.oauth",
    "writegate.gate.server.stdio",
    "writegate.gate.server.tokens",
    "writegate.eventlog.pgsql",
    "psycopg_pool",
    "uvicorn",
)
"""What ``serve`` imports on SQLite and PostgreSQL, over stdio and HTTP — not numpy, whose
import starts threads (a server's first question imports it, in the server). A module left
out is imported by the server that needs it: slower, not different."""


class Zygote:
    """The zygote of this test process, started on first use and stopped at its exit.
    ``serving``: whether the harness's servers are its forks — the suite's choice
    (``tests/conftest.py``), so a bench timing a server through the harness runs the
    console script, as a user does."""

    def __init__(self) -> None:
        self.serving = False
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._path = ""

    def command(self) -> list[str]:
        """What to run, before writegate's own arguments, for a forked ``writegate``."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._start()
        return [sys.executable, "-I", "-S", str(RELAY), self._path]

    def _start(self) -> None:
        self._path = os.path.join(tempfile.mkdtemp(prefix="wgz"), "zygote")
        said = tempfile.TemporaryFile()  # noqa: SIM115 - it lives as long as the zygote
        self._process = process = subprocess.Popen(
            [sys.executable, "-m", "tests.forked", self._path],
            cwd=Path(__file__).resolve().parents[1],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=said,
        )
        atexit.register(_stop, process, Path(self._path).parent)
        deadline = time.monotonic() + 60
        while not os.path.exists(self._path):
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                said.seek(0)
                raise RuntimeError(f"the zygote did not start: {said.read().decode()[-2000:]}")
            time.sleep(0.02)


ZYGOTE = Zygote()


def _stop(process: subprocess.Popen[bytes], folder: Path) -> None:
    process.terminate()
    process.wait()
    shutil.rmtree(folder, ignore_errors=True)  # its socket


def zygote(path: str) -> list[str]:
    """Import what a server imports, then fork a server for each relay that connects, until
    the test process that started this one is gone. Returns only in a server: its arguments."""
    for name in PRELOADED:
        importlib.import_module(name)
    assert threading.active_count() == 1, threading.enumerate()
    gc.freeze()  # what every server shares: no collection of theirs copies its pages
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".binding")
    listener.listen(64)
    os.rename(path + ".binding", path)  # seen only once it accepts
    listener.settimeout(1.0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the handlers reap themselves
    while os.getppid() == parent:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            return _handle(conn)
        conn.close()
    sys.exit(0)


def _handle(conn: socket.socket) -> list[str]:
    """One relay's server: forked, watched until it ends, its status sent back; if the
    relay goes first, the server is killed as its process would have been."""
    conn.settimeout(None)
    _, fds, _, _ = socket.recv_fds(conn, 1, 3)
    request = json.loads(conn.makefile("rb").readline())
    pid = os.fork()
    if pid == 0:
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        random.seed()
        sys.argv = ["writegate", *request["args"]]
        return list(request["args"])
    for fd in fds:
        os.close(fd)
    conn.sendall(f"pid {pid}\n".encode())
    ended = os.pidfd_open(pid)
    while True:
        ready, _, _ = select.select([conn.fileno(), ended], [], [])
        if ended in ready:
            _, status = os.waitpid(pid, 0)
            try:
                conn.sendall(f"exit {status}\n".encode())
            finally:
                os._exit(0)
        if not conn.recv(1):  # the relay is gone: so is its server
            os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    arguments = zygote(sys.argv[1])
    from writegate.cli.main import main

    main(arguments)
