"""The MCP server: the tool catalog behind the official SDK's lowlevel ``Server``.

One place decides every call (``WritegateServer._call_tool``):

1. the agent is the authenticated one: the bearer token's agent over HTTP, the
   server's configured agent over stdio; arguments never name the actor;
2. a tool the agent may not use is answered exactly like a tool that does not
   exist (seed 002 §B.8), so the catalog cannot be probed;
3. the tool's outcome goes through ``classify``: a gate rejection is a tool result
   with ``isError`` and the seed 000 shape; anything else is an internal failure,
   logged once with its traceback and answered as a JSON-RPC error.

The catalog (``gate.server.catalog``) follows the schema snapshot; when it moves
(``refresh_schema_cache``, or a write that met a schema published elsewhere), every
connected client is told (``gate.server.listeners``: ``notifications/tools/list_changed``,
or a ``subscriptions/listen`` event on the 2026-07-28 wire). Transports:
``gate.server.stdio`` and ``gate.server.http``.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import replace
from typing import Any

import anyio
import mcp_types as types
import orjson
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from writegate.eventlog.store import EventLog, WouldWait
from writegate.gate.api import Gate
from writegate.gate.jobs import Jobs
from writegate.gate.models import Rejected, dump
from writegate.gate.reads.reader import GraphReader
from writegate.gate.schema import SchemaSourceUnavailable
from writegate.gate.schema.registry import describe_registry
from writegate.gate.server.calls import Calls
from writegate.gate.server.calls import run as _run
from writegate.gate.server.catalog import build_catalog
from writegate.gate.server.grants import CallGrant, Disabled, declared_scopes
from writegate.gate.server.listeners import Listeners
from writegate.gate.server.observe import Metrics
from writegate.gate.server.policy import Policy, Principal
from writegate.gate.server.tokens import principal_from_access
from writegate.gate.server.tools import ToolCall, ToolSpec
from writegate.gate.version import __version__

log = logging.getLogger("writegate.server")

SCHEMA_URI = "writegate://schema"
STATS_URI = "writegate://stats"
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
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=orjson.dumps(data).decode())],
        structured_content=data,
        is_error=isinstance(result, Rejected),
    )


def unknown_tool(name: str) -> MCPError:
    """Used for unknown *and* denied tools, so both answers are byte-identical."""
    return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")


def unknown_resource(uri: str) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {uri}")


def session_of(headers: Any, meta: Any, agent: str) -> str:
    """What names an agent's session in its events. The legacy wire has ``Mcp-Session-Id``;
    the 2026-07-28 wire has no session, so: the W3C trace the client sends (``traceparent``:
    ``trace:<trace-id>``), else the client instance its credential and declared info name
    (``client:`` + 16 hex of SHA-256 over agent, client name and version) — stable across
    its requests, and never the credential itself."""
    if session := headers.get("mcp-session-id"):
        return str(session)
    parts = str(headers.get("traceparent") or "").split("-")
    if len(parts) == 4 and len(parts[1]) == 32:
        return f"trace:{parts[1]}"
    info = (meta or {}).get(types.CLIENT_INFO_META_KEY) or {}
    declared = f"{agent}|{info.get('name', '')}|{info.get('version', '')}"
    return "client:" + hashlib.sha256(declared.encode()).hexdigest()[:16]


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
        tools: str = "generic",
        output_schemas: bool = False,
        metrics: Metrics | None = None,
        jobs: Jobs | None = None,
        disabled_scopes: frozenset[str] = frozenset(),
    ) -> None:
        self.gate = gate
        self.jobs = jobs  # what job_start may run (the command's kinds)
        self.policy = policy or Policy.load()
        self.calls = Calls(gate, self.policy, jobs, disabled_scopes)
        self._declared: frozenset[str] = frozenset()  # the scopes the snapshot declares
        self.stdio_principal = stdio_principal or Principal(agent="stdio-agent", transport="stdio")
        if self.stdio_principal.session is None:
            self.stdio_principal = replace(self.stdio_principal, session=uuid.uuid4().hex)
        self.tool_choice = tools
        self.output_schemas = output_schemas  # off: what a model reads, nothing it does not
        self._sqlite = gate.log if isinstance(gate.log, EventLog) else None
        self.metrics = metrics or Metrics()
        self.metrics.open_sessions = self.open_sessions
        if jobs is not None:
            self.metrics.jobs = jobs.table.counts
        self.methods = tuple(sorted(gate.formula.allowed_extraction_methods()))
        self._catalog_key: object = object()
        self._tools: dict[str, ToolSpec] = {}
        self._tools_moved = False  # the catalog was rebuilt since clients were last told
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
        self.listeners = Listeners(self.bus, self.server)
        self.server.middleware.append(self.listeners)
        self.catalog()  # the policy knows every tool's group from the first request on

    # -- the catalog -----------------------------------------------------------------------

    def catalog(self) -> dict[str, ToolSpec]:
        """The tools for the current snapshot, rebuilt when the schema changes."""
        try:
            snapshot = self.gate.current_schema()
        except SchemaSourceUnavailable:
            snapshot = None
        key = snapshot.version if snapshot else None
        if key != self._catalog_key:
            self._tools_moved = bool(self._tools)  # not the first build
            self._tools = build_catalog(snapshot, self.methods, self.tool_choice)
            self.policy.declare_tools({name: spec.group for name, spec in self._tools.items()})
            self._declared = declared_scopes(snapshot)
            self._catalog_key = key
        return self._tools

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        """For the SDK's Mcp-Param header check; the catalog is public (``get_schema`` shows it)."""
        spec = self.catalog().get(name)
        return spec.input_schema() if spec is not None else None

    def visible_tools(self, principal: Principal) -> list[ToolSpec]:
        return [
            spec for spec in self.catalog().values() if self.policy.may_use(principal, spec.name)
        ]

    def tool_list(self, principal: Principal) -> list[types.Tool]:
        return [
            types.Tool(
                name=spec.name,
                description=spec.description,
                input_schema=spec.input_schema(),
                output_schema=spec.output_schema() if self.output_schemas else None,
                annotations=spec.annotations(),
            )
            for spec in self.visible_tools(principal)
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
        return replace(principal, session=session_of(request.headers, ctx.meta, principal.agent))

    def grant(self, principal: Principal) -> CallGrant:
        """The scopes one call of ``principal`` may use (``gate.server.calls``)."""
        self.catalog()  # the declared scopes follow the snapshot
        return self.calls.grant(principal, self._declared)

    async def _tell_if_moved(self) -> None:
        """Tell every connected client when this server's schema snapshot has moved — a
        refresh (whoever asked), a write that met a schema published elsewhere — once."""
        self.catalog()
        if self._tools_moved:
            self._tools_moved = False
            await self.listeners.tools_changed()

    def _inline(self, spec: ToolSpec) -> bool:
        """Whether a stdio call runs on the event loop (``_call_tool`` says when)."""
        return self._sqlite is not None and spec.group == "write" and not spec.destructive

    async def _run_stdio_write(self, spec: ToolSpec, call: ToolCall) -> BaseModel:
        """On the loop while the write lock is free; on a thread once it would wait."""
        assert self._sqlite is not None  # ``_inline``
        try:
            with self._sqlite.without_waiting():
                return _run(spec, call)
        except WouldWait:  # nothing was written: the same call again, where it may wait
            return await anyio.to_thread.run_sync(_run, spec, call)

    # -- handlers -----------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = types.ListToolsResult(tools=self.tool_list(self.principal(ctx)))
        await self._tell_if_moved()
        return listed

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Over HTTP every tool runs on a worker thread: calls from many clients overlap and
        their writes commit in groups. Over stdio, on a SQLite log, a write that deletes
        nothing runs on the event loop: one client, one write bounded by the gate's limits,
        and the thread hop (~0.1 ms, waking an idle worker and then the loop) was the largest
        part of what a write added to a call. The loop answers nothing else meanwhile (pings,
        cancellations), so it never waits there for a lock: while another process holds the
        file's write lock (stdio servers sharing one file), the write is tried without
        waiting, and then goes to a thread to wait (up to the busy timeout, ``[log]
        busy_timeout``, then ``LOG_UNAVAILABLE``) while the loop answers. Deletions (a
        detach may delete many relationships) and batches (which may hold them), every write
        to PostgreSQL (round trips, lock waits), and reads and audits (which may scan) go to
        a thread."""
        principal = self.principal(ctx)
        name = params.name
        spec = self.catalog().get(name)
        if spec is None and await anyio.to_thread.run_sync(
            self.gate.schema.catch_up, self.gate.log
        ):
            spec = self.catalog().get(name)  # a tool a schema published elsewhere adds
        if spec is None or not self.policy.may_use(principal, name):  # cached after the first
            raise unknown_tool(name)
        grant = self.grant(principal)
        if spec.gated and grant.disabled:  # seed 004's per-project gate, without error
            return classify(Disabled())
        call = self.calls.make(principal, spec, dict(params.arguments or {}), grant)
        with self.metrics.timed(name):
            try:
                if principal.transport == "stdio" and self._inline(spec):
                    result = await self._run_stdio_write(spec, call)  # see the docstring
                else:
                    result = await anyio.to_thread.run_sync(_run, spec, call)
            except Exception as exc:
                self.metrics.outcome(name, principal.agent, "error")
                log.exception("tool %s failed for agent %s", name, principal.agent)
                raise MCPError(
                    code=types.INTERNAL_ERROR,
                    message=f"internal error in {name}: {type(exc).__name__}",
                ) from exc
        if isinstance(result, Rejected):
            self.metrics.outcome(name, principal.agent, "rejected", result.error_code)
            log.info(
                "rejected %s for agent %s: %s %s",
                name,
                principal.agent,
                result.error_code,
                result.message[:200],
            )
        else:
            self.metrics.outcome(name, principal.agent, "ok")
        await self._tell_if_moved()
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
        reader = self.calls.make(principal, self.catalog()["get_schema"], {}, self.grant(principal))
        data = await anyio.to_thread.run_sync(self._resource, uri, reader.reader)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri, text=orjson.dumps(data).decode(), mime_type="application/json"
                )
            ]
        )

    def _resource(self, uri: str, reader: GraphReader) -> dict[str, Any]:
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
        stats = reader.stats(self.gate.log.head(), snapshot.version if snapshot else None)
        return stats.model_dump(mode="json")

    def open_sessions(self) -> int:
        """The Streamable HTTP sessions the SDK's session manager holds (0 before it exists):
        SDK 2.x forgets one on the client's ``DELETE`` and once idle for ``serve
        --session-idle-timeout`` (5 minutes by default) — the map that once only grew
        (issue 13) — and this is how an operator sees it stay flat."""
        manager = self.server._session_manager
        return len(manager._server_instances) if manager is not None else 0

    def health(self) -> dict[str, object]:
        """For ``/healthz``: the log reachable (else this raises, and ``http.HealthCheck``
        says so), the schema loaded, the head seq."""
        head = self.gate.log.head()[0]
        try:
            version: str | None = self.gate.current_schema().version
        except SchemaSourceUnavailable:
            version = None
        return {
            "status": "ok",
            "log": "reachable",
            "head_seq": head,
            "schema_loaded": version is not None,
            "schema_version": version,
        }


__all__ = ["WritegateServer", "classify", "unknown_tool"]
