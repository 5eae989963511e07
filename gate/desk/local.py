"""``writegate desk``: a read-only desk on a log, for an auditor handed a copy.

It listens on loopback only, with the same Host and Origin guard as ``serve --http``; nobody
signs in (whoever can reach loopback is the one auditor, ``Desk.local_copy``), and the desk
offers read-only tools only, so no page has an action and no route takes a POST.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette
from starlette.responses import RedirectResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from writegate.gate.api import Gate
from writegate.gate.desk.app import PREFIX, Desk
from writegate.gate.desk.routes import desk_routes
from writegate.gate.server.app import WritegateServer
from writegate.gate.server.http import HostGuard, HostPolicy, bind, serve

LOCAL = "127.0.0.1"


def desk_app(gate: Gate, port: int) -> ASGIApp:
    """The read-only desk on ``gate`` as served on loopback ``port``."""
    server = WritegateServer(gate)
    home = Route("/", lambda _: RedirectResponse(PREFIX + "/", 307), methods=["GET"])
    app = Starlette(routes=[home, *desk_routes(Desk.local_copy(server))])
    return HostGuard(app, HostPolicy(LOCAL, port))


def desk(gate: Gate, port: int = 0, ready: Callable[[str], None] = print) -> None:
    """Serve a read-only desk on ``gate`` at ``http://127.0.0.1:PORT/desk/`` until stopped
    (``port`` 0: any free one); ``ready`` hears the address once it listens. A taken port
    raises ``PortTaken``."""
    sock = bind(LOCAL, port)
    bound = int(sock.getsockname()[1])
    ready(f"http://{LOCAL}:{bound}{PREFIX}/")
    serve(desk_app(gate, bound), sock)
