"""Real MCP peers for the tests: ``writegate serve`` as a subprocess, the official SDK as client.

Nothing here is mocked: stdio tests launch a server and speak to it over its pipes; HTTP
tests start ``writegate serve --http`` on a free loopback port and connect with the SDK's
Streamable HTTP client and a real bearer token. In the suite a server is forked from a
process that has imported writegate already (``tests.forked``) unless a test names the
``command`` to run — ``WRITEGATE``, the console script, where the process itself is what it
tests; outside it (a bench) a server is the console script.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests import forked
from writegate.gate.server.tokens import create_token

WRITEGATE = str(Path(sys.executable).with_name("writegate"))


def _starting(command: str | None) -> list[str]:
    """The words that start a server: ``command``, else a fork of the suite's zygote where
    the suite serves from one (``Zygote.serving``), else the console script."""
    if command is not None:
        return [command]
    return forked.ZYGOTE.command() if forked.ZYGOTE.serving else [WRITEGATE]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Outcome:
    """A tool call's result as an agent sees it."""

    is_error: bool
    data: dict[str, Any]


@dataclass
class Agent:
    """An SDK client connected to writegate, with the notifications it received."""

    client: Client
    notifications: list[str] = field(default_factory=list)

    async def call(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        result = await self.client.call_tool(tool, arguments)
        assert isinstance(result, types.CallToolResult)
        assert result.structured_content is not None, result
        return Outcome(bool(result.is_error), result.structured_content)

    async def tool_names(self) -> list[str]:
        listed = await self.client.list_tools()
        return [t.name for t in listed.tools]


def _message_handler(agent_notes: list[str]) -> Any:
    async def handle(message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if isinstance(method, str):
            agent_notes.append(method)

    return handle


@asynccontextmanager
async def stdio_agent(
    db: Path | str,
    agent_id: str = "stdio-agent",
    roles: tuple[str, ...] = ("writer",),
    env: dict[str, str] | None = None,
    mode: str = "auto",
    command: str | None = None,
    extra: tuple[str, ...] = (),
) -> AsyncIterator[Agent]:
    program, *args = [*_starting(command), "--db", str(db), "serve", "--agent-id", agent_id]
    args += extra
    for role in roles:
        args += ["--role", role]
    params = StdioServerParameters(command=program, args=args, env={**os.environ, **(env or {})})
    notes: list[str] = []
    async with Client(params, mode=mode, message_handler=_message_handler(notes)) as client:
        yield Agent(client, notes)


def wait_listening(
    port: int,
    process: subprocess.Popen[bytes],
    seconds: float = 30,
    said: Callable[[], str] | None = None,
) -> None:
    """Return once something accepts connections on ``port``; a server that exits or
    takes longer is killed and what it said on stderr (``said``, else its pipe) is the error."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                if said is not None:
                    process.wait()
                    text = said()
                else:
                    text = process.stderr.read().decode() if process.stderr else ""
                raise RuntimeError(f"writegate serve --http did not start: {text}") from None
            time.sleep(0.05)


@dataclass
class HttpServer:
    url: str
    port: int
    db: Path | str  # a file, or a postgresql:// address
    process: subprocess.Popen[bytes]
    stderr: IO[bytes]  # a file, not a pipe: a pipe nobody drains stops a server that logs

    def said(self) -> str:
        """What the server has written to stderr so far."""
        if self.stderr.closed:
            return self.last_said
        return written_so_far(self.stderr)

    last_said: str = ""  # what it had said when it was stopped


def written_so_far(file: IO[bytes]) -> str:
    """What a child has written to ``file`` (its stderr), read without moving the offset the
    child writes at: the child shares it, so a seek here would have its next line overwrite
    the ones before (a server's announcement lost under its warning)."""
    fd = file.fileno()
    return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")


@contextmanager
def http_server(
    db: Path | str,
    env: dict[str, str] | None = None,
    extra: tuple[str, ...] = (),
    command: str | None = None,
) -> Iterator[HttpServer]:
    """``writegate serve --http`` (``command``: another install's) on the free port it takes
    (``--port 0``) and names, stopped (and reaped) afterwards: a port picked here and bound
    there could be taken in between."""
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [*_starting(command), "--db", str(db), "serve", "--http", "--port", "0", *extra],
            env={**os.environ, **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        server = HttpServer("", 0, db, process, stderr)
        server.port = announced_port(process, server.said)
        server.url = f"http://127.0.0.1:{server.port}/mcp"
        try:
            yield server
        finally:
            stop(process)
            server.last_said = server.said()


def announced_port(process: subprocess.Popen[bytes], said: Callable[[], str]) -> int:
    """The port a server says it serves on, once it has said so: it binds its port first,
    then opens what it serves (the log, the jobs it resumes), so a port that accepts is not
    yet a server."""
    deadline = time.monotonic() + 30
    while not (named := re.search(r"writegate MCP on http://\S+?:(\d+)/mcp", said())):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise AssertionError(f"the server did not start: {said()[-2000:]}")
        time.sleep(0.02)
    return int(named[1])


def stop(process: subprocess.Popen[bytes], seconds: float = 10) -> None:
    """Ask a server to stop; kill it if it has not within ``seconds``; reap it either way."""
    process.terminate()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@asynccontextmanager
async def http_agent(url: str, token: str, mode: str = "auto") -> AsyncIterator[Agent]:
    notes: list[str] = []
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, message_handler=_message_handler(notes)) as client:
            yield Agent(client, notes)


class Served:
    """One log served over one transport; ``agent(...)`` connects as an authenticated agent.

    Over HTTP each agent gets its own bearer token (created through the tokens API) and
    the server starts on first use; over stdio each agent is its own server process
    configured with ``--agent-id``/``--role``, as an MCP client config would launch it.
    """

    def __init__(self, transport: str, db: Path, extra: tuple[str, ...] = ()) -> None:
        self.transport = transport
        self.db = db
        self.extra = extra  # serve's own options, e.g. ("--tools", "all")
        self.env: dict[str, str] = {}
        self._server: HttpServer | None = None
        self._stack: Any = None

    def token(self, agent_id: str, roles: tuple[str, ...]) -> str:
        return create_token(Path(str(self.db) + ".tokens.json"), agent_id, roles)

    @property
    def url(self) -> str:
        if self._server is None:
            self._stack = http_server(self.db, self.env, extra=self.extra)
            self._server = self._stack.__enter__()
        return self._server.url

    @asynccontextmanager
    async def agent(
        self, agent_id: str = "agent-test", roles: tuple[str, ...] = ("writer",)
    ) -> AsyncIterator[Agent]:
        if self.transport == "stdio":
            async with stdio_agent(self.db, agent_id, roles, self.env, extra=self.extra) as agent:
                yield agent
        else:
            token = self.token(agent_id, roles)
            async with http_agent(self.url, token) as agent:
                yield agent

    def close(self) -> None:
        if self._stack is not None:
            self._stack.__exit__(None, None, None)
