"""The desk's pages: each asks one or a few tools and renders their answers as they are.

A person not signed in is sent to the sign-in form (a POST is refused instead); a page
whose tool the person may not use is answered as a page that does not exist, as MCP
answers a tool it may not see. Signing in and out and the review lane are in ``gate.desk.actions``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import anyio.to_thread
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from writegate.gate.audit.auditor import AuditEvents
from writegate.gate.audit.report import Report
from writegate.gate.desk.app import HEADERS, PREFIX, Desk, Who, node_href, principal_of, signed_in
from writegate.gate.desk.asks import NotPermitted, Refused
from writegate.gate.desk.changes import history_changes
from writegate.gate.desk.recent import RECENT, writers_now
from writegate.gate.moments import MAX_SEQ, in_utc
from writegate.gate.reads.observations import ObservationView
from writegate.gate.reads.reader import MAX_DEPTH, NodeHistory, Subgraph
from writegate.gate.reads.views import NodeView
from writegate.gate.server.audit_tools import AuditEventsArgs, IntegrityView
from writegate.gate.server.observation_tools import OpenObservationArgs
from writegate.gate.server.read_tools import (
    NeighborsArgs,
    NodeHistoryArgs,
    NodeRefArgs,
    OpenNodesArgs,
    SearchNodesArgs,
)
from writegate.gate.server.write_tools import NoArgs
from writegate.language import WriteProvenance

LOG_PAGE = 50


@signed_in
async def overview(desk: Desk, request: Request, who: Who) -> Response:
    """The head, the counts, the projections' lag, who is writing now and the last verify:
    what the state read model, the checkpoints and the log's newest page answer at once
    (the report, which reads the whole log, is a page of its own)."""
    stats = await desk.asker.stats(principal_of(who))
    lag = await anyio.to_thread.run_sync(desk.lag, stats.events) if stats is not None else []
    writers = None
    if stats is not None:
        writers = await writers_now(desk.asker, principal_of(who), stats.events)
    return desk.render(
        request,
        "overview.html",
        who,
        title="Overview",
        stats=stats,
        lag=lag,
        verified=desk.verified,
        writers=writers,
        recent=RECENT,
    )


@signed_in
async def report(desk: Desk, request: Request, who: Who) -> Response:
    """The report tool's page: writers, refusals, methods, confidences, held writes."""
    made = await desk.asker.ask(principal_of(who), "report", NoArgs(), Report)
    return desk.render(request, "report.html", who, title="Report", report=made)


@signed_in
async def verify(desk: Desk, request: Request, who: Who) -> Response:
    """Run the integrity checks (they read; nothing is appended), then the overview."""
    checked = await desk.asker.ask(principal_of(who), "integrity_report", NoArgs(), IntegrityView)
    if isinstance(checked, IntegrityView):
        desk.verified = checked
    return await overview(desk, request)


@signed_in
async def search(desk: Desk, request: Request, who: Who) -> Response:
    """Nodes found by their words, each a link to its page."""
    query = request.query_params.get("q", "").strip()
    found: Subgraph | Refused | None = None
    if query:
        try:
            args = SearchNodesArgs(query=query, cursor=request.query_params.get("cursor"))
        except ValidationError:
            return desk.bad(request, who, "a search is 1 to 500 characters")
        found = await desk.asker.ask(principal_of(who), "search_nodes", args, Subgraph)
    return desk.render(request, "search.html", who, title="Search", query=query, found=found)


def _ref(request: Request) -> NodeRefArgs | None:
    try:
        keys = json.loads(request.query_params.get("keys", ""))
        return NodeRefArgs(label=request.query_params.get("label", ""), merge_keys=keys)
    except (ValueError, ValidationError):
        return None


def _depth(request: Request) -> int:
    try:
        return min(max(int(request.query_params.get("depth", "1")), 1), MAX_DEPTH)
    except ValueError:
        return 1


@signed_in
async def node(desk: Desk, request: Request, who: Who) -> Response:
    """A node now: its facts with provenance, its neighbourhood (drawn), its history."""
    ref = _ref(request)
    if ref is None:
        return desk.bad(request, who, "a node is named by its label and merge keys (JSON)")
    principal = principal_of(who)
    depth = _depth(request)
    rtype = request.query_params.get("type") or None
    ask = desk.asker.ask
    moment = {k: v for k in ("as_of", "valid_at") if (v := request.query_params.get(k))}
    try:
        asked = OpenNodesArgs.model_validate({"nodes": [ref], **moment})
    except ValidationError:
        return desk.bad(request, who, "a time is ISO 8601 with a zone, e.g. 2026-01-31T12:00Z")
    opened = await ask(principal, "open_nodes", asked, Subgraph)
    around = await ask(
        principal,
        "neighbors",
        NeighborsArgs(node=ref, depth=depth, relationship_type=rtype),
        Subgraph,
    )
    cursor = request.query_params.get("cursor")
    history = await ask(
        principal, "node_history", NodeHistoryArgs(node=ref, cursor=cursor), NodeHistory
    )
    if isinstance(opened, Refused):
        return desk.render(request, "refused.html", who, status=404, title="Node", refused=opened)
    keys = dict(ref.merge_keys)
    this = next((n for n in opened.nodes if n.merge_keys == keys), None)
    if this is None:
        return desk.missing(request, who)
    return desk.render(
        request,
        "node.html",
        who,
        title=f"{this.label} {_name(this.merge_keys)}",
        node=this,
        around=around,
        history=history,
        changes=history_changes(history.entries, first_page=cursor is None)
        if isinstance(history, NodeHistory)
        else {},
        depth=depth,
        rtype=rtype or "",
        moment=moment,
        max_depth=MAX_DEPTH,
        graph=_graph(around, this, desk.asker.may(principal, "audit_events"))
        if isinstance(around, Subgraph)
        else None,
    )


def _name(keys: dict[str, Any]) -> str:
    return ", ".join(str(v) for v in keys.values())


def _graph(subgraph: Subgraph, center: NodeView, events: bool) -> dict[str, list[dict[str, Any]]]:
    """Cytoscape's elements: text only (drawn on a canvas, never parsed as markup), the
    page's node marked as the ``center``; an edge opens the event that wrote it only for a
    viewer who may read ``events``."""

    def key(label: str, keys: dict[str, Any]) -> str:
        return label + json.dumps(keys, sort_keys=True)

    nodes = [
        {
            "data": {
                "id": key(n.label, n.merge_keys),
                "name": f"{n.label}: {_name(n.merge_keys)}",
                "href": node_href(n.label, n.merge_keys),
                "center": n.label == center.label and n.merge_keys == center.merge_keys,
            }
        }
        for n in subgraph.nodes
    ]
    edges = [
        {
            "data": {
                "id": f"e{i}",
                "source": key(e.from_node.label, dict(e.from_node.merge_keys)),
                "target": key(e.to_node.label, dict(e.to_node.merge_keys)),
                "name": e.type,
                **({"href": f"{PREFIX}/event/{e.provenance.seq}"} if events else {}),
            }
        }
        for i, e in enumerate(subgraph.edges)
    ]
    return {"nodes": nodes, "edges": edges}


@signed_in
async def event(desk: Desk, request: Request, who: Who) -> Response:
    """One event as the log holds it, and the observations its claim cites."""
    seq = int(request.path_params["seq"])
    if seq > MAX_SEQ:  # past what a log can hold: no such event
        return desk.missing(request, who)
    args = AuditEventsArgs(cursor=str(max(seq - 1, 0)), limit=1)
    page = await desk.asker.ask(principal_of(who), "audit_events", args, AuditEvents)
    if isinstance(page, Refused):
        return desk.render(request, "refused.html", who, status=403, title="Event", refused=page)
    if not page.events or page.events[0].seq != seq:
        return desk.missing(request, who)
    shown = page.events[0]
    claim = WriteProvenance.read(shown.provenance) if shown.provenance else None
    cited = (claim.observations or []) if claim is not None else []
    return desk.render(
        request, "event.html", who, title=f"Event {seq}", event=shown, claim=claim, cited=cited
    )


@signed_in
async def observation(desk: Desk, request: Request, who: Who) -> Response:
    """One observation: the text a claim was extracted from."""
    try:
        args = OpenObservationArgs(observation_id=str(request.path_params["id"]))
    except ValidationError:
        return desk.missing(request, who)
    seen = await desk.asker.ask(principal_of(who), "open_observation", args, ObservationView)
    if isinstance(seen, Refused):
        return desk.render(
            request, "refused.html", who, status=404, title="Observation", refused=seen
        )
    return desk.render(request, "observation.html", who, title="Observation", seen=seen)


@signed_in
async def log(desk: Desk, request: Request, who: Who) -> Response:
    """The log, filtered by type, agent, node and time, a page at a time; on its last page, the
    events appended since arrive by themselves (``log_json``, asked by ``desk.js``)."""
    return await _log(desk, request, who, json_page=False)


async def log_json(desk: Desk, request: Request) -> Response:
    """One page of the log as ``audit_events`` answers it (its structured result); asked by
    a script, so nobody signed in is told so rather than sent to the sign-in form."""
    if (who := await desk.who(request)) is None:
        return JSONResponse({"error": "not signed in"}, status_code=401, headers=HEADERS)
    try:
        return await _log(desk, request, who, json_page=True)
    except NotPermitted:
        return desk.missing(request, who)


def _unread_time(request: Request) -> str | None:
    """What the log's time filters hold that is not a time, said as the tool would read it
    (ISO 8601; without a zone, UTC), or None."""
    for name, box in (("since", "From"), ("until", "To")):
        text = request.query_params.get(name) or ""
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
        except ValueError:
            return f"{box} {text!r} is not a time: ISO 8601, e.g. 2026-01-31T12:00Z"
        try:
            if moment is not None:
                in_utc(moment)
        except ValueError as why:
            return f"{box} {why}"
    return None


async def _log(desk: Desk, request: Request, who: Who, *, json_page: bool) -> Response:
    params = request.query_params
    kind, agent = params.get("type") or None, params.get("agent") or None
    named = bool(params.get("label") or params.get("keys"))  # one node: both, keys as JSON
    ref = _ref(request) if named else None
    why = _unread_time(request)
    if named and ref is None:
        why = 'a node filter is its label and its merge keys as JSON, e.g. {"name": "Ada"}'
    if why is not None:
        if json_page:
            return JSONResponse({"error": why}, status_code=400, headers=HEADERS)
        return desk.bad(request, who, why)
    try:
        args = AuditEventsArgs(
            agent=agent,
            types=[kind] if kind else None,
            node=ref,
            since=params.get("since") or None,
            until=params.get("until") or None,
            cursor=params.get("cursor") or None,
            limit=LOG_PAGE,
        )
    except ValidationError:
        return desk.bad(request, who, "a filter is not one the log knows")
    page = await desk.asker.ask(principal_of(who), "audit_events", args, AuditEvents)
    if json_page:
        status = 200 if isinstance(page, AuditEvents) else 400
        body = as_model(page) if isinstance(page, AuditEvents) else {"error": page.message}
        return JSONResponse(body, status_code=status, headers=HEADERS)
    filters: dict[str, Any] = {
        "type": kind or "",
        "agent": agent or "",
        "label": params.get("label", ""),
        "keys": params.get("keys", ""),
        "since": params.get("since", ""),
        "until": params.get("until", ""),
    }
    return desk.render(request, "log.html", who, title="Log", page=page, filters=filters)


def as_model(value: BaseModel) -> dict[str, Any]:
    """A model as the tool's structured result shows it (for a page's JSON view)."""
    return value.model_dump(mode="json", by_alias=True)
