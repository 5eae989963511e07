"""The Streamable HTTP transport: Host/Origin policy, bearer tokens, health and metrics.

* Host and Origin (seed 002 §B.3.1) are checked here, before anything else, and a
  wrong one is a 403 (the SDK's own check answers 421 for a Host): bound to loopback,
  only loopback Hosts; bound elsewhere, the ``--public-host`` values, or — with none —
  any Host (logged), the bearer token being the control. A browser ``Origin`` is
  refused unless listed.
* ``/mcp`` needs a bearer token (no or a bad one: 401 before any tool runs): one from the
  tokens file or, with ``[serve.oauth]``, an authorization server's JWT (``oauth``).
* A call nested deeper than the SDK's JSON parser reads is read again cut (``nesting``),
  so it gets the gate's ``INVALID_ARGUMENT`` with its id, as on stdio, not a ``-32700``.
* ``/healthz`` needs none: the log reachable, the schema loaded, the head seq; within
  ``HEALTH_WAIT`` seconds, "unreachable" when the log does not answer (the details go to
  the server's log, never to an unauthenticated caller).
* ``/metrics`` (Prometheus) only when enabled.
* ``/desk`` (``gate.desk``), given: web pages signed in with the same tokens, in a session
  cookie; there a browser's Origin may also be this server's own (its forms post back).
* The port is bound before the server starts, so a taken port is one clear error.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import anyio.to_thread
import uvicorn
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import PARSE_ERROR, JSONRPCError
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from writegate.eventlog.errors import one_line
from writegate.gate.server.nesting import cut
from writegate.gate.server.oauth import OAuthVerifier, auth_settings, protect
from writegate.gate.server.oauth_settings import OAuthSettings
from writegate.gate.server.tokens import TokenStore

log = logging.getLogger("writegate.server")
LOOPBACK = ("127.0.0.1", "localhost", "::1")
HEADROOM = 65_536  # JSON-RPC framing around the largest request the gate's limits allow
HEALTH_WAIT = 3.0  # seconds /healthz waits for the log before it says "unreachable"
SESSION_IDLE_TIMEOUT = 300.0  # seconds an HTTP session may go without a request
UNREACHABLE: dict[str, object] = {"status": "unavailable", "log": "unreachable"}


class PortTaken(OSError):
    """The address to serve on is in use (or not ours to bind); the message says which."""


@dataclass(frozen=True)
class HostPolicy:
    """Seed 002 §B.3.1: the Host/Origin policy follows from where the server binds."""

    bind: str
    port: int
    public_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()

    def hosts(self) -> set[str] | None:
        """The Host values accepted (None: any)."""
        if self.bind in LOOPBACK:
            loopback = {f"{h}:{self.port}" for h in ("127.0.0.1", "localhost", "[::1]")}
            return loopback | set(self.public_hosts)
        if self.public_hosts:
            return set(self.public_hosts)
        return None

    @property
    def checks_hosts(self) -> bool:
        return self.hosts() is not None


class HostGuard:
    """Host and Origin, before authentication and the MCP app (both 403 when wrong)."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.hosts = policy.hosts()
        self.origins = set(policy.allowed_origins)
        if self.hosts is None:
            log.warning(
                "binding %s without --public-host: Host checking is off; bearer tokens are "
                "the control",
                policy.bind,
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            host, origin = headers.get("host"), headers.get("origin")
            if self.hosts is not None and host not in self.hosts:
                await PlainTextResponse("Invalid Host header", status_code=403)(
                    scope, receive, send
                )
                return
            if origin is not None and origin not in self.origins and not _own(scope, host, origin):
                await PlainTextResponse("Invalid Origin header", status_code=403)(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


class Unnest:
    """A POST to the MCP endpoint whose body the SDK's parser refused (``-32700``) is read
    again cut where it nests deeper than that parser reads; anything else passes as it came.

    The SDK parses first — after authentication, so a caller without a token costs nothing
    here — and only a refused body is cut, in a worker thread (a linear but Python-speed
    pass over the bytes, which would hold up every call on the loop)."""

    def __init__(self, app: ASGIApp, path: str, max_body: int) -> None:
        self.app = app
        self.path = path
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        received: deque[Message] = deque()
        body = bytearray()
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.max_body or not message.get("more_body", False):
                break
        last = received[-1]
        if last["type"] != "http.request" or last.get("more_body", False):
            await self.app(scope, _replay(received, receive), send)
            return
        held = _ParseErrorHeld(send)
        await self.app(scope, _replay(received, receive), held.send)
        if not held.messages:
            return
        shallow = await anyio.to_thread.run_sync(cut, bytes(body))
        if shallow is None:
            for message in held.messages:
                await send(message)
            return
        again: deque[Message] = deque([{"type": "http.request", "body": shallow}])
        await self.app(scope, _replay(again, receive), send)


def _own(scope: Scope, host: str | None, origin: str) -> bool:
    """A desk page posting back to the server that served it (the Host being one this
    server answers to, as checked just before)."""
    desk = str(scope["path"]).startswith("/desk/")
    return desk and host is not None and origin in (f"http://{host}", f"https://{host}")


def _replay(received: deque[Message], receive: Receive) -> Receive:
    async def replay() -> Message:
        return received.popleft() if received else await receive()

    return replay


class _ParseErrorHeld:
    """Passes a response on, except a JSON-RPC parse error (400, ``-32700``), held back."""

    def __init__(self, send: Send) -> None:
        self.forward = send
        self.messages: list[Message] = []

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] == 400:
            self.messages.append(message)
            return
        if not self.messages:
            await self.forward(message)
            return
        self.messages.append(message)
        if message.get("more_body", False):
            return
        answer = b"".join(m.get("body", b"") for m in self.messages[1:])
        if not _is_parse_error(answer):
            for held in self.messages:
                await self.forward(held)
            self.messages.clear()


def _is_parse_error(answer: bytes) -> bool:
    try:
        return JSONRPCError.model_validate_json(answer).error.code == PARSE_ERROR
    except ValidationError:
        return False


@dataclass(frozen=True)
class Probes:
    """What ``/healthz`` and ``/metrics`` answer from."""

    health: Callable[[], dict[str, object]]
    metrics: Callable[[], bytes] | None = None


class HealthCheck:
    """``/healthz``'s answer within ``wait`` seconds. One check runs at a time, in a thread of
    its own; a probe arriving while it is still out waits for that same check, so a database
    that does not answer (paused, a network gone quiet) holds one thread, not one per probe,
    and every probe hears "unreachable" once ``wait`` has passed.

    The server's log hears of changes, not of probes (a load balancer probing every second
    would fill it): once when the log stops answering, with the database's words once a
    check brings them, and once when it answers again."""

    def __init__(self, check: Callable[[], dict[str, object]], wait: float = HEALTH_WAIT) -> None:
        self._check = check
        self._wait = wait
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="writegate-health")
        self._lock = threading.Lock()
        self._running: Future[dict[str, object]] | None = None
        self._saying = threading.Lock()  # guards the two below
        self._down = False  # said to be unreachable, not yet said to be back
        self._said_why = False  # the database's words said since

    def _current(self) -> Future[dict[str, object]]:
        with self._lock:
            if self._running is None or self._running.done():
                self._running = self._pool.submit(self._check)
                self._running.add_done_callback(self._heard)
            return self._running

    def _heard(self, check: Future[dict[str, object]]) -> None:
        """Every check's outcome, whether or not a probe still waited for it."""
        failed = check.exception()
        if failed is None:
            self._reachable()
        else:  # the details (a database's user, host, port) are for the server's log only
            self._unreachable(one_line(failed))

    def _unreachable(self, why: str | None) -> None:
        with self._saying:
            if self._down and (self._said_why or why is None):
                return
            self._down = True
            self._said_why = why is not None
        if why is None:
            log.warning("/healthz: the log did not answer within %g s", self._wait)
        else:
            log.warning("/healthz: the log is unreachable: %s", why)

    def _reachable(self) -> None:
        with self._saying:
            if not self._down:
                return
            self._down = self._said_why = False
        log.warning("/healthz: the log is reachable again")  # at the level its loss was said

    async def __call__(self) -> dict[str, object]:
        running = self._current()
        try:
            return await anyio.to_thread.run_sync(running.result, self._wait)
        except TimeoutError:
            self._unreachable(None)
            return UNREACHABLE
        except Exception:  # said by ``_heard``
            return UNREACHABLE


def probe_routes(probes: Probes) -> list[Route]:
    """The probes answer from worker threads: they read the log and ask the projections'
    stores, and a slow one must not hold up the event loop every MCP call runs on."""
    health = HealthCheck(probes.health)

    async def healthz(_request: Request) -> Response:
        report = await health()
        return JSONResponse(report, status_code=200 if report.get("status") == "ok" else 503)

    routes = [Route("/healthz", healthz, methods=["GET"])]
    if probes.metrics is not None:
        exposition = probes.metrics

        async def metrics(_request: Request) -> Response:
            text = await anyio.to_thread.run_sync(exposition)
            return Response(text, media_type="text/plain; version=0.0.4")

        routes.append(Route("/metrics", metrics, methods=["GET"]))
    return routes


def http_app(
    mcp_app: Callable[..., Starlette],
    tokens: TokenStore,
    hosts: HostPolicy,
    probes: Probes,
    max_body: int,
    path: str = "/mcp",
    oauth: OAuthSettings | None = None,
    session_idle_timeout: float = SESSION_IDLE_TIMEOUT,
    desk: Sequence[BaseRoute] = (),
) -> ASGIApp:
    """The SDK's Streamable HTTP app (``mcp_app``: the server's ``streamable_http_app``)
    with bearer tokens (and, configured, OAuth JWTs with the protected-resource metadata),
    the probes, a body limit, and the Host/Origin guard in front. A session with no
    request in flight for ``session_idle_timeout`` seconds is closed and forgotten (the SDK
    reaps it; its client gets a 404 and initializes again): a client that went away without
    its ``DELETE`` holds nothing for long. ``desk``: the desk's routes, beside the probes."""
    local = f"http://{_url_host(hosts.bind)}:{hosts.port}"
    auth = AuthSettings(issuer_url=local, resource_server_url=None)
    verifier: TokenVerifier = tokens
    if oauth is not None:
        resource = oauth_resource(oauth, hosts, path)
        auth = auth_settings(oauth, resource)
        verifier = OAuthVerifier(oauth, resource, tokens)
    app = mcp_app(
        streamable_http_path=path,
        # the guard in front checks Host and Origin (403, as the seed says)
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=hosts.bind,
        max_request_body_size=max_body + HEADROOM,
        session_idle_timeout=session_idle_timeout,
        auth=auth,
        token_verifier=verifier,
        custom_starlette_routes=probe_routes(probes),
    )
    app.router.routes.extend(desk)
    if oauth is not None:
        protect(app, auth, list(oauth.scopes), path)
    return HostGuard(Unnest(app, path, max_body + HEADROOM), hosts)


def oauth_resource(oauth: OAuthSettings, hosts: HostPolicy, path: str = "/mcp") -> str:
    """The URL tokens are for: ``[serve.oauth] resource``, else the loopback bind's."""
    if oauth.resource is not None:
        return str(oauth.resource)
    return f"http://{_url_host(hosts.bind)}:{hosts.port}{path}"


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, or ``PortTaken`` naming the address."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # named TCP, so asyncio turns Nagle off on each accepted connection (it only does for
    # sockets whose ``proto`` says TCP): with Nagle a response's body waited ~40 ms for the
    # client's delayed ACK of its headers
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PortTaken(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve(app: ASGIApp, sock: socket.socket, *, access_log: bool = False) -> None:
    """Run until interrupted (uvicorn, as the SDK's own runner does), on a bound socket.
    SIGTERM (a service manager's stop) ends in a return once uvicorn has shut down: uvicorn
    raises it again for the handler it found, which by default ended the process there, so
    the gate was never closed (refusals waiting for the write lock went unrecorded, unsaid)."""
    config = uvicorn.Config(app, log_config=None, access_log=access_log, lifespan="on")
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: None) if main else None
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
