"""The MCP server: the tool catalog behind the official SDK's lowlevel ``Server``, stdio or HTTP.

One place decides every call (``WritegateServer._call_tool``):

1. the agent is the authenticated one: the bearer token's agent over HTTP, the
   server's configured agent over stdio; arguments never name the actor;
2. a tool the agent may not use is answered exactly like a tool that does not
   exist (seed 002 §B.8), so the catalog cannot be probed;
3. the tool runs in a worker thread (SQLite blocks) and its outcome goes through
   ``classify``: a gate rejection is a tool result with ``isError`` and the seed
   000 shape; anything else is an internal failure and a JSON-RPC error.

The catalog is the built-in tools plus the per-type tools of the current schema
snapshot; when ``refresh_schema_cache`` changes the snapshot, clients are told
(``notifications/tools/list_changed``, or a ``subscriptions/listen`` event on the
2026-07-28 wire).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import anyio
import mcp_types as types
import orjson
import uvicorn
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from writegate.gate.api import Gate
from writegate.gate.errors import GateRejection
from writegate.gate.models import RefreshResult, Rejected, dump
from writegate.gate.reads import GraphReader
from writegate.gate.schema import SchemaSourceUnavailable
from writegate.gate.schema.registry import describe_registry
from writegate.gate.server.catalog import BUILTIN_TOOLS, ToolCall, ToolSpec
from writegate.gate.server.policy import Policy, Principal
from writegate.gate.server.tokens import TokenStore, principal_from_access
from writegate.gate.server.typed_tools import typed_tools
from writegate.gate.version import __version__

log = logging.getLogger("writegate.server")

SCHEMA_URI = "writegate://schema"
STATS_URI = "writegate://stats"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
INSTRUCTIONS = (
    "writegate is a write gate in front of a shared knowledge graph. Every write is checked "
    "against a schema (labels may be remapped to canonical ones), stamped with provenance you "
    "cannot set yourself, and kept in an append-only log. Declare where a fact came from "
    "(source) and how you got it (extraction_method); read back with search_nodes/open_nodes "
    "and weigh results by their provenance.confidence."
)


def classify(result: BaseModel) -> types.CallToolResult:
    """The one mapping from a gate outcome to a tool result (rejections are ``isError``)."""
    data = dump(result)
    text = orjson.dumps(data).decode()
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=data,
        is_error=isinstance(result, Rejected),
    )


def unknown_tool(name: str) -> MCPError:
    """Used for unknown *and* denied tools, so both answers are byte-identical."""
    return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")


def unknown_resource(uri: str) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {uri}")


@dataclass(frozen=True)
class HostPolicy:
    """Seed 002 §B.3.1: the Host/Origin policy follows from where the server binds."""

    bind: str
    port: int
    public_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()

    def settings(self) -> TransportSecuritySettings:
        if self.bind in LOOPBACK:
            hosts = [f"{h}:{self.port}" for h in ("127.0.0.1", "localhost", "[::1]")]
            return TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=[*hosts, *self.public_hosts],
                allowed_origins=list(self.allowed_origins),
            )
        if self.public_hosts:
            return TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=list(self.public_hosts),
                allowed_origins=list(self.allowed_origins),
            )
        log.warning(
            "binding %s without --public-host: Host checking is off; bearer tokens are the control",
            self.bind,
        )
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)

    @property
    def checks_hosts(self) -> bool:
        return self.bind in LOOPBACK or bool(self.public_hosts)


class OriginGuard:
    """Origin checking on its own, for the one deployment where Host checking is off
    (non-loopback, no public host): the SDK ties both to one switch. Requests without an
    ``Origin`` header (every non-browser MCP client) pass; a browser's must be listed."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = set(allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            origin = Headers(scope=scope).get("origin")
            if origin is not None and origin not in self.allowed:
                await PlainTextResponse("Invalid Origin header", status_code=403)(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


class _Server(Server[Any]):
    """The SDK server, advertising that the tool list changes (handshake-era capability)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class WritegateServer:
    """The gate as an MCP server; ``stdio_principal`` is who a stdio client is."""

    def __init__(
        self,
        gate: Gate,
        policy: Policy | None = None,
        *,
        stdio_principal: Principal | None = None,
    ) -> None:
        self.gate = gate
        self.policy = policy or Policy.load()
        self.reader = GraphReader(gate.log, gate.state)
        self.stdio_principal = stdio_principal or Principal(agent="stdio-agent", transport="stdio")
        if self.stdio_principal.session is None:
            self.stdio_principal = replace(self.stdio_principal, session=uuid.uuid4().hex)
        self._catalog_key: object = object()
        self._tools: dict[str, ToolSpec] = {}
        self._sessions: dict[str, ServerSession] = {}
        self.bus = InMemorySubscriptionBus()
        self.server = _Server(
            "writegate",
            version=__version__,
            instructions=INSTRUCTIONS,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_subscriptions_listen=ListenHandler(self.bus),
        )

    # -- the catalog -----------------------------------------------------------------------

    def catalog(self) -> dict[str, ToolSpec]:
        """Built-ins plus the current snapshot's per-type tools, rebuilt when the schema changes."""
        try:
            snapshot = self.gate.current_schema()
        except SchemaSourceUnavailable:
            snapshot = None
        key = snapshot.version if snapshot else None
        if key != self._catalog_key:
            tools = {spec.name: spec for spec in BUILTIN_TOOLS}
            if snapshot is not None:
                tools |= {spec.name: spec for spec in typed_tools(snapshot, tools)}
            self._tools = tools
            self.policy.declare_tools({name: spec.group for name, spec in tools.items()})
            self._catalog_key = key
        return self._tools

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        """For the SDK's Mcp-Param header check; the catalog is public (``get_schema`` shows it)."""
        spec = self.catalog().get(name)
        return spec.json_input_schema() if spec is not None else None

    def visible_tools(self, principal: Principal) -> list[ToolSpec]:
        return [
            spec for spec in self.catalog().values() if self.policy.may_use(principal, spec.name)
        ]

    # -- who is calling ----------------------------------------------------------------------

    def principal(self, ctx: ServerRequestContext[Any, Any]) -> Principal:
        request = ctx.request
        if request is None:
            return self.stdio_principal
        user = request.scope.get("user")
        principal = principal_from_access(getattr(user, "access_token", None))
        if principal is None:  # the bearer middleware lets nothing else through
            raise MCPError(
                code=types.INTERNAL_ERROR, message="request reached a tool unauthenticated"
            )
        session = request.headers.get("mcp-session-id")
        return replace(principal, session=session)

    def _remember(self, ctx: ServerRequestContext[Any, Any], principal: Principal) -> None:
        """Keep one session per connection so a schema change can be announced to all of them."""
        self._sessions[principal.session or "stdio"] = ctx.session

    async def _announce_tools_changed(self) -> None:
        await self.bus.publish(ToolsListChanged())
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:  # the client went away; forget it
                self._sessions.pop(key, None)

    # -- handlers -----------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        principal = self.principal(ctx)
        self._remember(ctx, principal)
        specs = await anyio.to_thread.run_sync(self.visible_tools, principal)
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=spec.json_input_schema(),
                    output_schema=spec.json_output_schema(),
                    annotations=types.ToolAnnotations(
                        read_only_hint=spec.read_only,
                        destructive_hint=spec.name.startswith("delete_"),
                        idempotent_hint=spec.read_only,
                        open_world_hint=False,
                    ),
                )
                for spec in specs
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        principal = self.principal(ctx)
        self._remember(ctx, principal)
        name = params.name
        spec = self.catalog().get(name)
        if spec is None or not self.policy.may_use(principal, name):  # cached after the first
            raise unknown_tool(name)
        call = ToolCall(
            gate=self.gate,
            reader=self.reader,
            actor=principal.actor(),
            guard=self.policy.write_guard(principal, name),
        )
        arguments = dict(params.arguments or {})
        try:
            result = await anyio.to_thread.run_sync(_run, spec, call, arguments)
        except Exception as exc:
            log.exception("tool %s failed", name)
            raise MCPError(
                code=types.INTERNAL_ERROR, message=f"internal error in {name}: {type(exc).__name__}"
            ) from exc
        if isinstance(result, RefreshResult):
            before = set(self._tools)
            if set(self.catalog()) != before:
                await self._announce_tools_changed()
        return classify(result)

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        principal = self.principal(ctx)
        if not self.policy.may_use(principal, "get_schema"):
            return types.ListResourcesResult(resources=[])
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=SCHEMA_URI,
                    name="schema",
                    description="The schema writes are checked against, with its version.",
                    mime_type="application/json",
                ),
                types.Resource(
                    uri=STATS_URI,
                    name="stats",
                    description="Log head, node and relationship counts by label and type.",
                    mime_type="application/json",
                ),
            ]
        )

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        principal = self.principal(ctx)
        if uri not in (SCHEMA_URI, STATS_URI) or not self.policy.may_use(principal, "get_schema"):
            raise unknown_resource(uri)
        data = await anyio.to_thread.run_sync(self._resource, uri)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri, text=orjson.dumps(data).decode(), mime_type="application/json"
                )
            ]
        )

    def _resource(self, uri: str) -> dict[str, Any]:
        try:
            snapshot = self.gate.current_schema()
        except SchemaSourceUnavailable:
            snapshot = None
        if uri == SCHEMA_URI:
            if snapshot is None:
                return {"schema_version": None, "document": None}
            return {
                "schema_version": snapshot.version,
                "document": describe_registry(snapshot.registry),
            }
        stats = self.reader.stats(self.gate.log.head(), snapshot.version if snapshot else None)
        return stats.model_dump(mode="json")

    # -- transports ------------------------------------------------------------------------

    async def run_stdio(self) -> None:
        async with stdio_server() as (read_stream, write_stream):
            await self.server.run(
                read_stream, write_stream, self.server.create_initialization_options()
            )

    def http_app(self, tokens: TokenStore, hosts: HostPolicy, *, path: str = "/mcp") -> Starlette:
        """Streamable HTTP at ``path``; no or a bad bearer token is a 401 before any tool runs."""
        app = self.server.streamable_http_app(
            streamable_http_path=path,
            transport_security=hosts.settings(),
            host=hosts.bind,
            auth=AuthSettings(
                issuer_url=f"http://{_url_host(hosts.bind)}:{hosts.port}",
                resource_server_url=None,
            ),
            token_verifier=tokens,
        )
        if not hosts.checks_hosts:
            app.add_middleware(OriginGuard, allowed=hosts.allowed_origins)
        return app


def _run(spec: ToolSpec, call: ToolCall, arguments: dict[str, Any]) -> BaseModel:
    try:
        return spec.run(call, arguments)
    except GateRejection as exc:
        return Rejected(error_code=exc.code, message=exc.message, details=exc.details)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def serve_http(
    server: WritegateServer,
    tokens: TokenStore,
    hosts: HostPolicy,
    *,
    log_level: str = "warning",
) -> None:
    """Run the HTTP transport until interrupted (uvicorn, as the SDK's own runner does)."""
    uvicorn.run(
        server.http_app(tokens, hosts), host=hosts.bind, port=hosts.port, log_level=log_level
    )


__all__: Sequence[str] = ("HostPolicy", "WritegateServer", "classify", "serve_http", "unknown_tool")
