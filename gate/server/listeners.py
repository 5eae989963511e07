"""Every connected session, to tell when the tools change.

The SDK builds a ``ServerSession`` per request: a proxy over its connection's standalone
channel (the GET stream on Streamable HTTP, the pipe on stdio). Kept weakly, one dropped
out as soon as its request ended, so only the session that refreshed was told. ``Listeners``
keeps one per connection, from its first message on (it is a server middleware: it sees
every inbound message, ``notifications/initialized`` too), and forgets a Streamable HTTP
session once the SDK's session manager no longer holds it (the client's ``DELETE``, 30 idle
minutes). The 2026-07-28 wire has no connection to push on: its clients listen
(``subscriptions/listen``) and are told through the subscription bus.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.subscriptions import ToolsListChanged

log = logging.getLogger("writegate.server")
STDIO = "stdio"  # a stdio server has one connection


class Listeners:
    """The sessions of ``server`` to tell, and the ``bus`` its listen streams hear."""

    def __init__(self, bus: SubscriptionBus, server: Server[Any]) -> None:
        self.bus = bus
        self.server = server
        self._sessions: dict[str, ServerSession] = {}

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Middleware: remember the connection each message came on, then handle it."""
        self.remember(ctx)
        return await call_next(ctx)

    def remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        key = _connection_of(ctx)
        if key is None:
            return
        if key not in self._sessions:
            self._forget_ended()  # so ended sessions do not pile up between announcements
        self._sessions[key] = ctx.session

    async def tools_changed(self) -> None:
        """``notifications/tools/list_changed`` on every live connection, and a
        ``ToolsListChanged`` event to every listen stream."""
        await self.bus.publish(ToolsListChanged())
        self._forget_ended()
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()  # its connection's standalone channel
            except Exception as exc:  # the client went away meanwhile; forget it
                log.debug("could not tell session %s its tools changed: %s", key, exc)
                self._sessions.pop(key, None)

    def _forget_ended(self) -> None:
        """Drop the Streamable HTTP sessions the SDK's session manager no longer holds (none
        over stdio: it has no session manager, and one connection)."""
        manager = self.server._session_manager
        if manager is None:
            return
        live = manager._server_instances
        for key in [k for k in self._sessions if k != STDIO and k not in live]:
            del self._sessions[key]


def _connection_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """What names the message's connection: ``stdio``, the ``Mcp-Session-Id`` of a Streamable
    HTTP session, or None (an HTTP message outside a session: ``initialize`` before it has
    one, or the 2026-07-28 wire, which has no channel to push on)."""
    if ctx.request is None:
        return STDIO
    session = ctx.request.headers.get("mcp-session-id")
    return str(session) if session else None


__all__ = ["Listeners"]
