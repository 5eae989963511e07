"""The desk itself: who is asking, its templates, and the headers every page carries.

Two ways in. Behind ``serve --http`` (``Desk.signed``): a person signs in with the bearer
token an agent would use, into a session (``gate.desk.sessions``); pages and actions are
asked of the tools as that token (``gate.desk.asks``). On a copy (``Desk.local_copy``, for
``writegate desk``): no sign-in, one auditor's reads on loopback, and no action anywhere.

Every value from the graph is an agent's text: templates autoescape, scripts come only
from the package (``static/``, the vendored graph library included), and the
Content-Security-Policy allows no other script, inline or fetched.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import wraps
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from writegate.gate.audit.report import ProjectionLag
from writegate.gate.desk.asks import Asker, NotPermitted
from writegate.gate.desk.changes import as_text
from writegate.gate.desk.sessions import COOKIE, Sessions, SignedIn, Verify
from writegate.gate.server.app import WritegateServer
from writegate.gate.server.audit_tools import IntegrityView
from writegate.gate.server.observe import Checkpoints
from writegate.gate.server.policy import Principal

HERE = Path(__file__).resolve().parent
PREFIX = "/desk"
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
# the tools whose controls a page may offer (asked per person: ``Asker.may``)
CONTROLS = (
    "review_queue",
    "review_decide",
    "audit_events",
    "audit_conflicts",
    "audit_duplicates",
    "integrity_report",
    "report",
    "merge_nodes",
    "unmerge_nodes",
)


def keys_json(merge_keys: dict[str, Any]) -> str:
    """Merge keys as the desk's forms and links carry them: canonical JSON as a plain
    string, which autoescape quotes for an attribute (``tojson`` is Markup: never escaped
    again, and its quotes would end the attribute)."""
    return json.dumps(merge_keys, sort_keys=True, separators=(",", ":"))


def node_href(label: str, merge_keys: dict[str, Any]) -> str:
    """A node's page: its label and merge keys, as the tools name a node."""
    return f"{PREFIX}/node?" + urlencode({"label": label, "keys": keys_json(merge_keys)})


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True)
    env.globals["node_href"] = node_href
    env.globals["keys_json"] = keys_json
    env.globals["prefix"] = PREFIX
    env.filters["shown"] = as_text
    env.filters["pretty"] = lambda value: json.dumps(value, indent=2, sort_keys=True, default=str)
    return env


@dataclass
class Desk:
    """One desk: the server it asks, who may sign in, and what it remembers between pages."""

    asker: Asker
    sessions: Sessions | None  # None: a local, read-only desk
    local: Principal | None = None  # who everyone is on a local desk
    env: Environment = field(default_factory=_environment)
    verified: IntegrityView | None = None  # the last verify run here
    checkpoints: Checkpoints | None = None  # the configured projections' (``serve``'s)

    def lag(self, head: int) -> list[ProjectionLag]:
        """Each projection's checkpoint and lag behind ``head``: the state read model is
        kept in each append's transaction (never behind); the configured ones are asked."""
        rows = [ProjectionLag(name="state (inline)", checkpoint=head, lag=0)]
        if self.checkpoints is not None:
            for name, seq in self.checkpoints.read().items():
                lag = None if seq is None else max(head - seq, 0)
                error = "unreachable" if seq is None else None
                rows.append(ProjectionLag(name=name, checkpoint=seq, lag=lag, error=error))
        return rows

    @classmethod
    def signed(
        cls, server: WritegateServer, verify: Verify, checkpoints: Checkpoints | None = None
    ) -> Desk:
        """A desk behind ``serve --http``: sign in with a token that ``verify`` knows."""
        return cls(Asker(server), Sessions(verify), checkpoints=checkpoints)

    @classmethod
    def local_copy(cls, server: WritegateServer, agent: str = "desk") -> Desk:
        """A read-only desk on a copy of a log: one auditor, no sign-in, no action."""
        auditor = Principal(agent=agent, roles=("auditor",), transport="desk", scopes=None)
        return cls(Asker(server, read_only=True), None, auditor)

    async def who(self, request: Request) -> SignedIn | Principal | None:
        """The person asking: a session's, the local auditor, or nobody."""
        if self.sessions is None:
            return self.local
        return await self.sessions.who(request.cookies.get(COOKIE))

    def render(
        self,
        request: Request,
        template: str,
        who: SignedIn | Principal | None,
        status: int = 200,
        **context: Any,
    ) -> Response:
        principal = who.principal if isinstance(who, SignedIn) else who
        may = {tool: principal is not None and self.asker.may(principal, tool) for tool in CONTROLS}
        html = self.env.get_template(template).render(
            request=request,
            principal=principal,
            csrf=who.session.csrf if isinstance(who, SignedIn) else None,
            signed=self.sessions is not None,
            read_only=self.asker.read_only,
            may=may,
            **context,
        )
        return HTMLResponse(html, status_code=status, headers=HEADERS)

    def missing(self, request: Request, who: Who | None) -> Response:
        return self.render(request, "missing.html", who, status=404, title="Not found")

    def bad(self, request: Request, who: Who, why: str) -> Response:
        return self.render(
            request, "missing.html", who, status=400, title="Not understood", why=why
        )


Who = SignedIn | Principal
Handler = Callable[[Desk, Request], Awaitable[Response]]
Page = Callable[[Desk, Request, Who], Awaitable[Response]]


def principal_of(who: Who) -> Principal:
    return who.principal if isinstance(who, SignedIn) else who


def signed_in(page: Page) -> Handler:
    """A page for someone signed in (anyone else is sent to the sign-in form); a tool the
    person may not use answers as a page that does not exist, as MCP answers a tool it may
    not see."""

    @wraps(page)
    async def serve(desk: Desk, request: Request) -> Response:
        if (who := await desk.who(request)) is None:
            return RedirectResponse(PREFIX + "/signin", 303)
        try:
            return await page(desk, request, who)
        except NotPermitted:
            return desk.missing(request, who)

    return serve
