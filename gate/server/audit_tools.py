"""Tools for the auditor role: the log itself, filtered, the integrity checks, what
conflicts and entity resolution did, and the report (with the review queue).

Faces over ``gate.audit.auditor.Auditor``, ``Gate.verify`` and ``gate.audit.report``, the
same calls as ``writegate audit``, ``writegate verify`` and ``writegate report``. A caller
granted some scopes audits only nodes it can see (``gate.server.audit_scopes``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from writegate.gate.audit.auditor import AuditEvents, Auditor
from writegate.gate.audit.conflicts import ConflictAudit
from writegate.gate.audit.conflicts import audit_conflicts as conflicts_of
from writegate.gate.audit.duplicates import DuplicateAudit
from writegate.gate.audit.duplicates import audit_duplicates as duplicates_of
from writegate.gate.audit.report import Report, gate_report
from writegate.gate.audit.subject import SubjectExport
from writegate.gate.moments import cursor_after, moment_of
from writegate.gate.server.audit_scopes import must_see, readable, whole_log
from writegate.gate.server.read_tools import NodeRefArgs, schema_or_none
from writegate.gate.server.tools import ToolCall, ToolSpec, tool
from writegate.gate.server.write_tools import NoArgs
from writegate.language import node_stream

_ARGS = ConfigDict(extra="forbid", frozen=True)


class AuditEventsArgs(BaseModel):
    model_config = _ARGS

    agent: StrictStr | None = Field(default=None, description="Only events by this agent.")
    types: list[StrictStr] | None = Field(
        default=None, description="Only events of these types (e.g. node.written)."
    )
    node: NodeRefArgs | None = Field(default=None, description="Only events touching this node.")
    since: StrictStr | None = Field(default=None, description="From this ISO 8601 time.")
    until: StrictStr | None = Field(default=None, description="Up to this ISO 8601 time.")
    limit: StrictInt = Field(default=50, ge=1, le=500, description="At most this many events.")
    cursor: StrictStr | None = Field(
        default=None, description="The next_cursor of the previous page."
    )


class Check(BaseModel):
    model_config = _ARGS

    name: str
    ok: bool
    detail: str


class IntegrityView(BaseModel):
    model_config = _ARGS

    ok: bool
    head_seq: int  # verified up to here: the head of the snapshot the checks read
    head_hash: str
    checks: list[Check]


@tool("audit", read_only=True)
def audit_events(call: ToolCall, args: AuditEventsArgs) -> AuditEvents:
    """The event log, filtered (agent, event types, one node, time range) and paged: every
    accepted write with its actor, provenance and hash."""
    after = cursor_after(args.cursor)
    stream = None
    if args.node is not None:
        identity = call.reader.identity(args.node.ref(), schema_or_none(call), call.gate.log)
        must_see(call, identity)
        stream = node_stream(identity)
    else:
        whole_log(call, "audit_events")
    return Auditor(call.gate.log).events(
        after=after,
        limit=args.limit,
        agent=args.agent,
        types=args.types,
        stream=stream,
        since=moment_of(args.since, "since"),
        until=moment_of(args.until, "until"),
        shown=readable(call, stream),
    )


@tool("audit", read_only=True)
def integrity_report(call: ToolCall, args: NoArgs) -> IntegrityView:
    """Recompute the hash chain, check the append-only triggers, the history index against
    the events and the read model against a replay, all on one snapshot; returns each
    check and the head it verified."""
    whole_log(call, "integrity_report")
    report = call.gate.verify()
    return IntegrityView(
        ok=report.ok,
        head_seq=report.head_seq,
        head_hash=report.head_hash,
        checks=[Check(name=c.name, ok=c.ok, detail=c.detail) for c in report.checks],
    )


class ConflictsArgs(BaseModel):
    model_config = _ARGS

    since: StrictStr | None = Field(default=None, description="From this ISO 8601 time.")
    until: StrictStr | None = Field(default=None, description="Up to this ISO 8601 time.")


@tool("audit", read_only=True)
def audit_conflicts(call: ToolCall, args: ConflictsArgs) -> ConflictAudit:
    """Every held fact a write superseded (the old value, who had set it, at what
    confidence) and every write a conflict policy refused, oldest first."""
    whole_log(call, "audit_conflicts")
    return conflicts_of(
        call.gate.log, since=moment_of(args.since, "since"), until=moment_of(args.until, "until")
    )


@tool("audit", read_only=True)
def audit_duplicates(call: ToolCall, args: ConflictsArgs) -> DuplicateAudit:
    """Every write entity resolution landed on a node the graph held, and every write it
    refused as a probable duplicate, oldest first."""
    whole_log(call, "audit_duplicates")
    return duplicates_of(
        call.gate.log, since=moment_of(args.since, "since"), until=moment_of(args.until, "until")
    )


@tool("audit", read_only=True)
def report(call: ToolCall, args: NoArgs) -> Report:
    """The one page an auditor hands on: log size and chain, writes and rejections per
    agent, method and label, confidences, remaps, supersessions, and the writes held for
    review (who, what, when, why). Projections' lag is the operator's (writegate report)."""
    whole_log(call, "report")
    return gate_report(call.gate, [])


class ExportSubjectArgs(BaseModel):
    model_config = _ARGS

    node: NodeRefArgs = Field(description="The node the export is about.")


@tool("audit", read_only=True)
def export_subject(call: ToolCall, args: ExportSubjectArgs) -> SubjectExport:
    """Everything held about one node, for a subject access or portability request: its
    current values and who set each, every version with its provenance (agent, source,
    method, reliability, confidence, record and valid time, event), what each superseded,
    corroborations, merges and resolutions, its relationships' events, the full text of
    the observations cited, the writes held for review and the refused requests that name
    it. It names other nodes and observations of any scope, so it needs a grant of every
    scope."""
    whole_log(call, "export_subject")
    identity = call.reader.identity(args.node.ref(), schema_or_none(call), call.gate.log)
    return Auditor(call.gate.log, call.gate.state).export_subject(identity)


AUDIT_TOOLS: tuple[ToolSpec, ...] = (
    audit_events,
    integrity_report,
    audit_conflicts,
    audit_duplicates,
    report,
    export_subject,
)
