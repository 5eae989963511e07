"""The stdio transport, answering every line — even one it cannot read.

The SDK's reader hands the server an exception for a line it cannot parse, and the
server drops it: the client then waits forever. writegate stands between the two: a line
nested too deeply for the SDK's parser (a ``tools/call`` with arguments nested hundreds
of levels) is read cut (``gate.server.nesting``), so the call gets the gate's
``INVALID_ARGUMENT`` with its own id; anything else gets JSON-RPC's ``-32700`` parse error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from writegate.gate.server.nesting import cut
from writegate.gate.server.pipes import Pipes, stdio_pipes

log = logging.getLogger("writegate.server")
GRACE = 10.0  # seconds to answer the requests already read once the client closes stdin


def terminal_banner(agent: str, roles: Sequence[str]) -> str:
    """What a server started by hand in a terminal says (an MCP client hears nothing)."""
    return (
        f"writegate MCP on stdio as agent {agent} ({', '.join(roles)}): send JSON-RPC "
        "messages, one a line; an MCP client starts this command itself. Ctrl-C or Ctrl-D "
        "stops it"
    )


def read_message(line: bytes) -> types.JSONRPCMessage:
    """A line's message as the SDK reads it (UTF-8, errors replaced); one nested too deeply
    for the parser is read cut. Raises ``ValidationError`` for anything else unreadable."""
    try:
        return _validated(line)
    except ValidationError:
        shallow = cut(line)
        if shallow is None:
            raise
        return _validated(shallow)


def _validated(line: bytes) -> types.JSONRPCMessage:
    text = line.decode("utf-8", errors="replace")
    message: types.JSONRPCMessage = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    return message


def _raw_line(exc: Exception) -> str | None:
    """The line the SDK's reader could not parse, from the error it handed on."""
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if errors and isinstance(errors[0].get("input"), str):
            return str(errors[0]["input"])
    return None


def parse_error(exc: Exception) -> SessionMessage:
    log.info("unreadable line on stdio answered with -32700: %s", str(exc)[:200])
    return SessionMessage(
        types.JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=types.ErrorData(code=types.PARSE_ERROR, message="Parse error"),
        )
    )


def _reread(exc: Exception) -> SessionMessage:
    """What to hand the server for a line the SDK's reader refused: the line read cut, or
    the parse error to send back."""
    raw = _raw_line(exc)
    if raw is not None:
        try:
            return SessionMessage(read_message(raw.encode()))
        except ValidationError:
            pass
    return parse_error(exc)


async def run_stdio(server: Server[Any]) -> None:
    """Serve one client over stdin/stdout until it goes away: on the loop's own pipes
    (``gate.server.pipes``) where they are pipes, else through the SDK's transport."""
    async with stdio_pipes() as pipes:
        if pipes is not None:
            await _serve_pipes(server, pipes)
            return
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def pump() -> None:
            async with send:
                async for item in read_stream:
                    message = _reread(item) if isinstance(item, Exception) else item
                    if isinstance(item, Exception) and isinstance(
                        message.message, types.JSONRPCError
                    ):
                        await write_stream.send(message)  # the parse error, to the client
                    else:
                        await send.send(message)

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            await server.run(receive, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()


async def _serve_pipes(server: Server[Any], pipes: Pipes) -> None:
    """The SDK's stdio framing (a JSON-RPC message a line, read as UTF-8 with errors
    replaced, written as the SDK writes it) with the unreadable lines answered. When the
    client closes stdin, the requests it already sent are answered (for up to ``GRACE``
    seconds) before the server stops: the SDK cancels whatever is in flight at EOF."""
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    pending: set[types.RequestId] = set()  # read, not yet answered (ids as the SDK matches)
    settled: anyio.Event | None = None  # made at EOF, set once nothing is pending

    async def read() -> None:
        nonlocal settled
        async with to_server:
            async for line in pipes.lines():
                try:
                    message = read_message(line)
                except Exception as exc:
                    await pipes.send(_line(parse_error(exc)))
                    continue
                if isinstance(message, types.JSONRPCRequest):
                    pending.add(coerce_request_id(message.id))
                elif isinstance(message, types.JSONRPCNotification):
                    _withdraw(pending, message)
                await to_server.send(SessionMessage(message))
            settled = anyio.Event()
            if pending:
                with anyio.move_on_after(GRACE):
                    await settled.wait()

    async def write() -> None:
        async with from_server:
            async for message in from_server:
                await pipes.send(_line(message))
                if isinstance(message.message, types.JSONRPCResponse | types.JSONRPCError):
                    if message.message.id is not None:
                        pending.discard(coerce_request_id(message.message.id))
                    if not pending and settled is not None:
                        settled.set()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        await server.run(server_in, server_out, server.create_initialization_options())
        group.cancel_scope.cancel()


def _withdraw(pending: set[types.RequestId], note: types.JSONRPCNotification) -> None:
    """A request the client cancels is never answered by the SDK: nothing to wait for."""
    if note.method == "notifications/cancelled":
        withdrawn = cancelled_request_id_from_params(note.params)
        if withdrawn is not None:
            pending.discard(coerce_request_id(withdrawn))


def _line(message: SessionMessage) -> str:
    return message.message.model_dump_json(by_alias=True, exclude_unset=True)
