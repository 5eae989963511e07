"""The desk's actions: signing in and out, a reviewer's decision on a held write, and a
reviewer's merge of duplicates (and its undo).

Every POST is refused (403, nothing asked of any tool, so nothing appended) unless it
carries the CSRF token of the session it comes from; a decision is then asked of
``review_decide`` (a merge of ``merge_nodes``, an undo of ``unmerge_nodes``) as the
signed-in person, so a reader's session is refused by the same
policy that hides the tool from the reader's agent. The sign-in form is tied to a cookie of
its own (double submit); the browser's Origin is checked in front (``gate.server.http``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from writegate.gate.desk.app import PREFIX, Desk, Who, principal_of, signed_in
from writegate.gate.desk.asks import NotPermitted, Refused
from writegate.gate.desk.changes import proposal_changes
from writegate.gate.desk.sessions import COOKIE, SIGNIN_COOKIE, SignedIn, fresh_token, same
from writegate.gate.merges.operations import MergeResult, UnmergeResult
from writegate.gate.reads.reader import Subgraph
from writegate.gate.reads.views import NodeView
from writegate.gate.review import Proposal, ReviewDecision, ReviewQueue
from writegate.gate.server.merge_tools import MergeNodesArgs, UnmergeNodesArgs
from writegate.gate.server.read_tools import NodeRefArgs, OpenNodesArgs
from writegate.gate.server.review_tools import ReviewDecideArgs, ReviewQueueArgs
from writegate.language import node_identity, parse_node_identity

MAX_FORM = 16_384  # bytes a desk form may send (a token, a reason)


def _refused(why: str) -> Response:
    return Response(
        why, status_code=403, media_type="text/plain", headers={"Cache-Control": "no-store"}
    )


async def _form(request: Request) -> dict[str, str]:
    if int(request.headers.get("content-length") or 0) > MAX_FORM:
        return {}
    form = await request.form(max_files=0, max_fields=20)
    return {k: v for k, v in form.items() if isinstance(v, str)}


def _cookie(request: Request) -> dict[str, Any]:
    return {
        "httponly": True,
        "samesite": "strict",
        "secure": request.url.scheme == "https",
        "path": PREFIX,
    }


async def signin_form(desk: Desk, request: Request) -> Response:
    """The form that takes a token; its CSRF value is also set as a cookie of its own."""
    who = await desk.who(request)
    if who is not None:
        return RedirectResponse(PREFIX + "/", 303)
    check = fresh_token()
    page = desk.render(request, "signin.html", None, title="Sign in", signin_csrf=check)
    page.set_cookie(SIGNIN_COOKIE, check, max_age=3600, **_cookie(request))
    return page


async def signin(desk: Desk, request: Request) -> Response:
    """A token that verifies starts a session; anything else signs nobody in."""
    assert desk.sessions is not None  # only a signed desk has the route
    form = await _form(request)
    if not same(form.get("csrf"), request.cookies.get(SIGNIN_COOKIE)):
        return _refused("the sign-in form has expired: load it again")
    token = form.get("token", "").strip()
    if not token or await desk.sessions.check(token) is None:
        check = fresh_token()
        page = desk.render(
            request,
            "signin.html",
            None,
            status=401,
            title="Sign in",
            signin_csrf=check,
            failed=True,
        )
        page.set_cookie(SIGNIN_COOKIE, check, max_age=3600, **_cookie(request))
        return page
    key, _ = desk.sessions.start(token)
    done = RedirectResponse(PREFIX + "/", 303)
    done.set_cookie(COOKIE, key, **_cookie(request))
    done.delete_cookie(SIGNIN_COOKIE, path=PREFIX)
    return done


async def _signed(desk: Desk, request: Request) -> tuple[SignedIn | None, dict[str, str]]:
    """The session behind a POST, if its CSRF token is the session's own."""
    assert desk.sessions is not None
    who = await desk.sessions.who(request.cookies.get(COOKIE))
    form = await _form(request)
    if who is None or not same(form.get("csrf"), who.session.csrf):
        return None, form
    return who, form


async def signout(desk: Desk, request: Request) -> Response:
    who, _ = await _signed(desk, request)
    if who is None:
        return _refused("not signed in, or the form has expired")
    assert desk.sessions is not None
    desk.sessions.end(request.cookies.get(COOKIE))
    done = RedirectResponse(PREFIX + "/signin", 303)
    done.delete_cookie(COOKIE, path=PREFIX)
    return done


@signed_in
async def review(desk: Desk, request: Request, who: Who) -> Response:
    """The held writes, oldest first, each beside the node it would change as it stands."""
    return await _queue(desk, request, who, None)


async def _queue(
    desk: Desk, request: Request, who: Who, outcome: ReviewDecision | Refused | None
) -> Response:
    """The review page, after ``outcome`` (a decision just taken) if any."""
    principal = principal_of(who)
    queue = await desk.asker.ask(principal, "review_queue", ReviewQueueArgs(), ReviewQueue)
    current: dict[str, NodeView] = {}
    if isinstance(queue, ReviewQueue) and desk.asker.may(principal, "open_nodes"):
        current = await _standing(desk, principal, queue.proposals)
    proposals = queue.proposals if isinstance(queue, ReviewQueue) else []
    status = 200 if not isinstance(outcome, Refused) else 409
    return desk.render(
        request,
        "review.html",
        who,
        status=status,
        title="Review",
        queue=queue,
        current=current,
        changes={p.proposal: proposal_changes(p, current.get(p.target)) for p in proposals},
        named={
            p.target: node_identity(r.label, r.merge_keys) for p in proposals if (r := _named(p))
        },
        outcome=outcome,
        decide=desk.asker.may(principal, "review_decide"),
    )


async def _standing(desk: Desk, principal: Any, proposals: list[Proposal]) -> dict[str, NodeView]:
    """The nodes held writes would change, as they stand now (by each write's target). A
    node is opened by the keys the write names (a personal node's target is its pseudonym,
    which names none), so one such write never costs the others theirs."""
    wanted: dict[str, str] = {}  # target: the node's identity by its keys
    refs = []
    for proposal in proposals:
        ref = _named(proposal)
        if ref is not None and proposal.target not in wanted:
            wanted[proposal.target] = node_identity(ref.label, ref.merge_keys)
            refs.append(ref)
    if not refs:
        return {}
    opened = await desk.asker.ask(
        principal, "open_nodes", OpenNodesArgs(nodes=refs[:500]), Subgraph
    )
    if isinstance(opened, Refused):
        return {}
    found = {node_identity(n.label, n.merge_keys): n for n in opened.nodes}
    return {target: found[i] for target, i in wanted.items() if i in found}


def _named(proposal: Proposal) -> NodeRefArgs | None:
    """The node a held write names by its keys (None: a relationship, or no node)."""
    asked = proposal.arguments
    label, keys = asked.get("label"), asked.get("merge_keys")
    if not isinstance(label, str) or not isinstance(keys, dict) or not keys:
        try:
            label, keys = parse_node_identity(proposal.target)
        except ValueError:
            return None
    try:
        return NodeRefArgs(label=label, merge_keys=keys) if keys else None
    except ValidationError:
        return None


async def decide(desk: Desk, request: Request) -> Response:
    """Approve or reject one held write, as the signed-in reviewer, with a reason."""
    who, form = await _signed(desk, request)
    if who is None:
        return _refused("not signed in, or the form has expired")
    if not desk.asker.may(who.principal, "review_decide"):
        return _refused("you may not decide held writes")
    try:
        args = ReviewDecideArgs(
            proposal=str(request.path_params["proposal"]),
            decision=form.get("decision", ""),
            note=form.get("note", ""),
        )
    except ValidationError:
        return _refused("a decision is approve or reject, with a reason of at most 2000 characters")
    try:
        outcome = await desk.asker.ask(who.principal, "review_decide", args, ReviewDecision)
    except NotPermitted:
        return _refused("you may not decide held writes")
    try:
        return await _queue(desk, request, who, outcome)
    except NotPermitted:
        return desk.missing(request, who)


MERGED_BY = "writegate desk"  # the source a reviewer's merge at the desk declares


async def merge(desk: Desk, request: Request) -> Response:
    """Fold a duplicate into the node whose page the form is on (the reviewer's call)."""
    who, form = await _signed(desk, request)
    if who is None:
        return _refused("not signed in, or the form has expired")
    if not desk.asker.may(who.principal, "merge_nodes"):
        return _refused("you may not merge nodes")
    try:
        args = MergeNodesArgs(
            label=form.get("label", ""),
            survivor_keys=json.loads(form.get("survivor_keys", "")),
            duplicate_keys=json.loads(form.get("duplicate_keys", "")),
            reason=form.get("reason", ""),
            source=MERGED_BY,
            extraction_method="manual",
            reliability=float(form.get("reliability", "0.9")),
        )
    except (ValueError, ValidationError):
        return _refused("a merge names the duplicate's merge keys as JSON, and a reason")
    outcome = await desk.asker.ask(who.principal, "merge_nodes", args, MergeResult)
    return desk.render(
        request, "merged.html", who, status=_status(outcome), title="Merge", outcome=outcome
    )


async def unmerge(desk: Desk, request: Request) -> Response:
    """Undo a merge: the duplicate returns with its values, relationships and writers."""
    who, form = await _signed(desk, request)
    if who is None:
        return _refused("not signed in, or the form has expired")
    if not desk.asker.may(who.principal, "unmerge_nodes"):
        return _refused("you may not undo merges")
    try:
        args = UnmergeNodesArgs(
            merge=form.get("merge", ""),
            reason=form.get("reason", ""),
            source=MERGED_BY,
            extraction_method="manual",
        )
    except ValidationError:
        return _refused("an undo names the merge and a reason")
    outcome = await desk.asker.ask(who.principal, "unmerge_nodes", args, UnmergeResult)
    return desk.render(
        request, "merged.html", who, status=_status(outcome), title="Undo merge", outcome=outcome
    )


def _status(outcome: object) -> int:
    return 409 if isinstance(outcome, Refused) else 200
