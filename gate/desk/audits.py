"""The desk's audit pages: what conflicts superseded or refused, and what entity
resolution did (duplicates landed on a node, refused as probable, merged, unmerged).

Faces over ``audit_conflicts`` and ``audit_duplicates``; both read the whole log (within
the time range given), so each is a page of its own, never part of the overview.
"""

from __future__ import annotations

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from writegate.gate.audit.conflicts import ConflictAudit
from writegate.gate.audit.duplicates import DuplicateAudit
from writegate.gate.desk.app import PREFIX, Desk
from writegate.gate.desk.asks import NotPermitted
from writegate.gate.desk.sessions import SignedIn
from writegate.gate.server.audit_tools import ConflictsArgs


def _range(request: Request) -> ConflictsArgs:
    params = request.query_params
    return ConflictsArgs(since=params.get("since") or None, until=params.get("until") or None)


async def conflicts(desk: Desk, request: Request) -> Response:
    """Every value a write superseded, beside who had held it and at which confidence, and
    every write a conflict policy refused."""
    if (who := await desk.who(request)) is None:
        return RedirectResponse(PREFIX + "/signin", 303)
    principal = who.principal if isinstance(who, SignedIn) else who
    try:
        found = await desk.asker.ask(principal, "audit_conflicts", _range(request), ConflictAudit)
    except NotPermitted:
        return desk.render(request, "missing.html", who, status=404, title="Not found")
    except ValidationError:
        return desk.render(request, "missing.html", who, status=400, title="Not understood")
    return desk.render(request, "conflicts.html", who, title="Conflicts", found=found)


async def duplicates(desk: Desk, request: Request) -> Response:
    """Each write entity resolution landed on an existing node, refused as a probable
    duplicate, or merged (and unmerged): the two identities side by side."""
    if (who := await desk.who(request)) is None:
        return RedirectResponse(PREFIX + "/signin", 303)
    principal = who.principal if isinstance(who, SignedIn) else who
    try:
        found = await desk.asker.ask(principal, "audit_duplicates", _range(request), DuplicateAudit)
    except NotPermitted:
        return desk.render(request, "missing.html", who, status=404, title="Not found")
    except ValidationError:
        return desk.render(request, "missing.html", who, status=400, title="Not understood")
    return desk.render(request, "duplicates.html", who, title="Duplicates", found=found)
