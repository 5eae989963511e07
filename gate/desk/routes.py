"""The desk's routes: every page and action under ``/desk``, its static files beside them.

A local, read-only desk gets no sign-in and no POST route at all: nothing there can act.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from writegate.gate.desk import actions, audits, pages
from writegate.gate.desk.app import HERE, PREFIX, Desk, Handler


def desk_routes(desk: Desk) -> list[BaseRoute]:
    """The desk's pages under ``/desk`` (its static files too), to mount beside ``/mcp``."""

    def bound(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return await handler(desk, request)

        return endpoint

    routes: list[BaseRoute] = [
        Route(PREFIX, lambda _: RedirectResponse(PREFIX + "/", 307), methods=["GET"]),
        Route(PREFIX + "/", bound(pages.overview), methods=["GET"]),
        Route(PREFIX + "/verify", bound(pages.verify), methods=["GET"]),
        Route(PREFIX + "/report", bound(pages.report), methods=["GET"]),
        Route(PREFIX + "/conflicts", bound(audits.conflicts), methods=["GET"]),
        Route(PREFIX + "/duplicates", bound(audits.duplicates), methods=["GET"]),
        Route(PREFIX + "/search", bound(pages.search), methods=["GET"]),
        Route(PREFIX + "/node", bound(pages.node), methods=["GET"]),
        Route(PREFIX + "/event/{seq:int}", bound(pages.event), methods=["GET"]),
        Route(PREFIX + "/observation/{id}", bound(pages.observation), methods=["GET"]),
        Route(PREFIX + "/log", bound(pages.log), methods=["GET"]),
        Route(PREFIX + "/log.json", bound(pages.log_json), methods=["GET"]),
        Route(PREFIX + "/review", bound(actions.review), methods=["GET"]),
        Mount(PREFIX + "/static", StaticFiles(directory=HERE / "static"), name="desk-static"),
    ]
    if desk.sessions is not None:  # a local desk has no sign-in and no action
        routes += [
            Route(PREFIX + "/signin", bound(actions.signin_form), methods=["GET"]),
            Route(PREFIX + "/signin", bound(actions.signin), methods=["POST"]),
            Route(PREFIX + "/signout", bound(actions.signout), methods=["POST"]),
            Route(PREFIX + "/review/{proposal}", bound(actions.decide), methods=["POST"]),
            Route(PREFIX + "/merge", bound(actions.merge), methods=["POST"]),
            Route(PREFIX + "/unmerge", bound(actions.unmerge), methods=["POST"]),
        ]
    return routes
