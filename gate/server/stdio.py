"""The stdio transport, answering every line — even one it cannot read.

The SDK's reader hands the server an exception for a line it cannot parse, and the
server drops it: the client then waits forever. writegate stands between the two and
answers instead: a line that is JSON but too deeply nested for the SDK's parser (a
``tools/call`` with arguments nested ~200 levels) gets the gate's ``INVALID_ARGUMENT``
rejection as its tool result; anything else gets JSON-RPC's ``-32700`` parse error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import orjson
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from writegate.gate.server.pipes import Pipes, stdio_pipes

log = logging.getLogger("writegate.server")
# answers a too-deep tools/call: (request id, tool name) -> the result to send
DeepCall = Callable[[Any, str], types.CallToolResult]
GRACE = 10.0  # seconds to answer the requests already read once the client closes stdin


def _raw_line(exc: Exception) -> str | None:
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if errors and isinstance(errors[0].get("input"), str):
            return str(errors[0]["input"])
    return None


def answer_unreadable(exc: Exception, deep_call: DeepCall) -> SessionMessage:
    """The reply to a line the SDK could not read."""
    raw = _raw_line(exc)
    message: Any = None
    if raw is not None:
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError:
            message = None
    if (
        isinstance(message, dict)
        and message.get("method") == "tools/call"
        and isinstance(message.get("id"), str | int)
        and isinstance(message.get("params"), dict)
        and isinstance(message["params"].get("name"), str)
    ):
        result = deep_call(message["id"], message["params"]["name"])
        reply: types.JSONRPCMessage = types.JSONRPCResponse(
            jsonrpc="2.0",
            id=message["id"],
            result=result.model_dump(by_alias=True, exclude_none=True),
        )
    else:
        log.info("unreadable line on stdio answered with -32700: %s", str(exc)[:200])
        reply = types.JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=types.ErrorData(code=types.PARSE_ERROR, message="Parse error"),
        )
    return SessionMessage(reply)


async def run_stdio(server: Server[Any], deep_call: DeepCall) -> None:
    """Serve one client over stdin/stdout until it goes away: on the loop's own pipes
    (``gate.server.pipes``) where they are pipes, else through the SDK's transport."""
    async with stdio_pipes() as pipes:
        if pipes is not None:
            await _serve_pipes(server, deep_call, pipes)
            return
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def pump() -> None:
            async with send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(answer_unreadable(item, deep_call))
                    else:
                        await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            await server.run(receive, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()


async def _serve_pipes(server: Server[Any], deep_call: DeepCall, pipes: Pipes) -> None:
    """The SDK's stdio framing (a JSON-RPC message a line, read as UTF-8 with errors
    replaced, written as the SDK writes it) with the unreadable lines answered. When the
    client closes stdin, the requests it already sent are answered (for up to ``GRACE``
    seconds) before the server stops: the SDK cancels whatever is in flight at EOF."""
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    pending: set[Any] = set()
    settled = anyio.Condition()  # notified whenever nothing is waiting for an answer

    async def read() -> None:
        async with to_server:
            async for line in pipes.lines():
                try:
                    message = types.jsonrpc_message_adapter.validate_json(
                        line.decode("utf-8", errors="replace"), by_name=False
                    )
                except Exception as exc:
                    await pipes.send(_line(answer_unreadable(exc, deep_call)))
                    continue
                if isinstance(message, types.JSONRPCRequest):
                    pending.add(message.id)
                await to_server.send(SessionMessage(message))
            with anyio.move_on_after(GRACE):
                async with settled:
                    while pending:
                        await settled.wait()

    async def write() -> None:
        async with from_server:
            async for message in from_server:
                await pipes.send(_line(message))
                if isinstance(message.message, types.JSONRPCResponse | types.JSONRPCError):
                    pending.discard(message.message.id)
                    if not pending:
                        async with settled:
                            settled.notify_all()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        await server.run(server_in, server_out, server.create_initialization_options())
        group.cancel_scope.cancel()


def _line(message: SessionMessage) -> str:
    return message.message.model_dump_json(by_alias=True, exclude_unset=True)
