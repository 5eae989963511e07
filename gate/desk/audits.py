"""The desk's audit pages: what conflicts superseded or refused, and what entity
resolution did (duplicates landed on a node, refused as probable, merged, unmerged).

Faces over ``audit_conflicts`` and ``audit_duplicates``; both read the whole log (within
the time range given), so each is a page of its own, never part of the overview.
"""

from __future__ import annotations

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from writegate.gate.audit.conflicts import ConflictAudit
from writegate.gate.audit.duplicates import DuplicateAudit
from writegate.gate.desk.app import Desk, Who, principal_of, signed_in
from writegate.gate.server.audit_tools import ConflictsArgs


@signed_in
async def conflicts(desk: Desk, request: Request, who: Who) -> Response:
    """Every value a write superseded, beside who had held it and at which confidence, and
    every write a conflict policy refused."""
    return await _audit(desk, request, who, "audit_conflicts", ConflictAudit, "Conflicts")


@signed_in
async def duplicates(desk: Desk, request: Request, who: Who) -> Response:
    """Each write entity resolution landed on an existing node, refused as a probable
    duplicate, or merged (and unmerged): the two identities side by side."""
    return await _audit(desk, request, who, "audit_duplicates", DuplicateAudit, "Duplicates")


async def _audit(
    desk: Desk, request: Request, who: Who, tool: str, answer: type[BaseModel], title: str
) -> Response:
    """``tool``'s answer over the time range asked, on the page named for it."""
    params = request.query_params
    try:
        asked = ConflictsArgs(since=params.get("since") or None, until=params.get("until") or None)
    except ValidationError:
        return desk.bad(request, who, "a time is ISO 8601 with a zone, e.g. 2026-01-31T12:00Z")
    found = await desk.asker.ask(principal_of(who), tool, asked, answer)
    return desk.render(request, f"{title.lower()}.html", who, title=title, found=found)
