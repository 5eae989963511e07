"""The built-in MCP tools: one typed spec each (pydantic in, pydantic out) over the gate's API.

A ``ToolSpec`` names the tool, its policy group, the model its arguments follow
(the published ``inputSchema``), the model a success returns (``outputSchema``)
and the function that runs it. Write tools hand the agent's arguments to the gate
untouched, so the event's ``request`` is exactly what the agent sent and the
gate's own strict validation decides; read tools validate here. No tool takes a
query language: every write goes through the gate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, TypeAdapter

from writegate.eventlog import Actor
from writegate.eventlog.events import format_timestamp
from writegate.gate.api import Gate
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import (
    BatchResult,
    DeleteNodeRequest,
    DeleteNodeResult,
    DeleteRelationshipRequest,
    DeleteRelationshipResult,
    Keys,
    RefreshResult,
    Rejected,
    WriteNodeRequest,
    WriteNodeResult,
    WriteRelationshipRequest,
    WriteRelationshipResult,
    parse_request,
)
from writegate.gate.reads import MAX_DEPTH, GraphReader, NodeHistory, PathResult, Subgraph
from writegate.gate.schema.registry import describe_registry
from writegate.gate.writing import WriteGuard
from writegate.language import node_stream

_ARGS = ConfigDict(extra="forbid", frozen=True)
IdempotencyKey = StrictStr | None


@dataclass(frozen=True)
class ToolCall:
    """Everything one call may use; the actor comes from authentication, never from arguments."""

    gate: Gate
    reader: GraphReader
    actor: Actor
    guard: WriteGuard


Runner = Callable[[ToolCall, dict[str, Any]], BaseModel]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    group: str  # the policy group: write | read | schema | audit
    description: str
    arguments: type[BaseModel] | None  # None: the schema is given as ``input_schema``
    result: type[BaseModel]
    run: Runner
    input_schema: dict[str, Any] | None = None
    read_only: bool = False

    def json_input_schema(self) -> dict[str, Any]:
        if self.input_schema is not None:
            return self.input_schema
        assert self.arguments is not None
        return _input_schema(self.arguments)

    def json_output_schema(self) -> dict[str, Any]:
        return _output_schema(self.result)


@cache
def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


@cache
def _output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The success shape or the seed's rejection shape: clients that check structured
    content against ``outputSchema`` even on ``isError`` (older SDKs do) accept both."""
    either: TypeAdapter[Any] = TypeAdapter(Union[model, Rejected])  # type: ignore[arg-type]  # noqa: UP007
    schema = either.json_schema(mode="serialization", by_alias=True)
    return {"type": "object", **schema}


# -- argument models ---------------------------------------------------------------------


class WriteNodeArgs(WriteNodeRequest):
    idempotency_key: IdempotencyKey = None


class WriteRelationshipArgs(WriteRelationshipRequest):
    idempotency_key: IdempotencyKey = None


class DeleteNodeArgs(DeleteNodeRequest):
    idempotency_key: IdempotencyKey = None


class DeleteRelationshipArgs(DeleteRelationshipRequest):
    idempotency_key: IdempotencyKey = None


class WriteBatchArgs(BaseModel):
    model_config = _ARGS

    items: list[dict[str, Any]] = Field(
        description="Operations applied as one: each is {op: write_node | write_relationship | "
        "delete_node | delete_relationship, ...that tool's arguments}."
    )
    idempotency_key: IdempotencyKey = None


class NoArgs(BaseModel):
    model_config = _ARGS


class NodeRefArgs(BaseModel):
    model_config = _ARGS

    label: StrictStr
    merge_keys: Keys


class OpenNodesArgs(BaseModel):
    model_config = _ARGS

    nodes: list[NodeRefArgs] = Field(min_length=1, max_length=500)


class SearchNodesArgs(BaseModel):
    model_config = _ARGS

    query: StrictStr = Field(min_length=1, max_length=500)
    limit: StrictInt = Field(default=25, ge=1, le=500)
    cursor: StrictStr | None = None


class NeighborsArgs(BaseModel):
    model_config = _ARGS

    node: NodeRefArgs
    depth: StrictInt = Field(default=1, ge=1, le=MAX_DEPTH)
    relationship_type: StrictStr | None = None
    limit: StrictInt = Field(default=100, ge=1, le=500)


class FindPathArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    from_node: NodeRefArgs = Field(alias="from")
    to_node: NodeRefArgs = Field(alias="to")
    max_depth: StrictInt = Field(default=MAX_DEPTH, ge=1, le=MAX_DEPTH)
    relationship_type: StrictStr | None = None


class NodeHistoryArgs(BaseModel):
    model_config = _ARGS

    node: NodeRefArgs
    limit: StrictInt = Field(default=50, ge=1, le=500)
    cursor: StrictStr | None = None


class SchemaView(BaseModel):
    model_config = _ARGS

    schema_version: str
    document: dict[str, Any]


# -- runners ------------------------------------------------------------------------------


def _ref(node: NodeRefArgs) -> dict[str, Any]:
    return {"label": node.label, "merge_keys": dict(node.merge_keys)}


def _schema_or_none(gate: Gate) -> Any:
    try:
        return gate.current_schema()
    except Exception:  # reads work without a schema: labels are then taken as given
        return None


def get_schema(call: ToolCall, arguments: dict[str, Any]) -> SchemaView:
    parse_request(NoArgs, arguments)
    snapshot = call.gate.current_schema()
    return SchemaView(
        schema_version=snapshot.version, document=describe_registry(snapshot.registry)
    )


def open_nodes(call: ToolCall, arguments: dict[str, Any]) -> Subgraph:
    args = parse_request(OpenNodesArgs, arguments)
    return call.reader.open_nodes([_ref(n) for n in args.nodes], _schema_or_none(call.gate))


def search_nodes(call: ToolCall, arguments: dict[str, Any]) -> Subgraph:
    args = parse_request(SearchNodesArgs, arguments)
    return call.reader.search_nodes(args.query, args.limit, args.cursor)


def neighbors(call: ToolCall, arguments: dict[str, Any]) -> Subgraph:
    args = parse_request(NeighborsArgs, arguments)
    return call.reader.neighbors(
        _ref(args.node),
        depth=args.depth,
        relationship_type=args.relationship_type,
        limit=args.limit,
        schema=_schema_or_none(call.gate),
    )


def find_path(call: ToolCall, arguments: dict[str, Any]) -> PathResult:
    args = parse_request(FindPathArgs, arguments)
    return call.reader.find_path(
        _ref(args.from_node),
        _ref(args.to_node),
        max_depth=args.max_depth,
        relationship_type=args.relationship_type,
        schema=_schema_or_none(call.gate),
    )


def node_history(call: ToolCall, arguments: dict[str, Any]) -> NodeHistory:
    args = parse_request(NodeHistoryArgs, arguments)
    return call.reader.node_history(
        _ref(args.node), limit=args.limit, cursor=args.cursor, schema=_schema_or_none(call.gate)
    )


def _gate_op(name: str) -> Runner:
    def run(call: ToolCall, arguments: dict[str, Any]) -> BaseModel:
        return call.gate.call(name, arguments, actor=call.actor, guard=call.guard)

    run.__name__ = name
    return run


def _refresh(call: ToolCall, arguments: dict[str, Any]) -> BaseModel:
    parse_request(NoArgs, arguments)
    return call.gate.refresh_schema_cache()


GATE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "write_node",
        "write",
        "Create or update one node through the gate (MERGE on label + merge_keys). The label is "
        "checked against the schema (synonyms are remapped), properties are type-checked, and "
        "provenance (confidence from reliability and extraction_method) is computed, not taken.",
        WriteNodeArgs,
        WriteNodeResult,
        _gate_op("write_node"),
    ),
    ToolSpec(
        "write_relationship",
        "write",
        "Create or update one relationship between two nodes named by label + keys. "
        "endpoint_policy 'merge_endpoints' creates missing endpoints as _stub nodes.",
        WriteRelationshipArgs,
        WriteRelationshipResult,
        _gate_op("write_relationship"),
    ),
    ToolSpec(
        "delete_node",
        "write",
        "Delete one node (recorded as an event with provenance, never erased from the log). "
        "detach=true also deletes its relationships.",
        DeleteNodeArgs,
        DeleteNodeResult,
        _gate_op("delete_node"),
    ),
    ToolSpec(
        "delete_relationship",
        "write",
        "Delete one relationship (recorded as an event with provenance).",
        DeleteRelationshipArgs,
        DeleteRelationshipResult,
        _gate_op("delete_relationship"),
    ),
    ToolSpec(
        "write_batch",
        "write",
        "Several writes accepted or rejected as one; a rejection names the failing item.",
        WriteBatchArgs,
        BatchResult,
        _gate_op("write_batch"),
    ),
    ToolSpec(
        "refresh_schema_cache",
        "schema",
        "Reload the schema from its source and swap it in atomically; the per-type tools follow.",
        NoArgs,
        RefreshResult,
        _refresh,
    ),
    ToolSpec(
        "get_schema",
        "read",
        "The schema writes are checked against: labels, keys, properties, relationship types.",
        NoArgs,
        SchemaView,
        get_schema,
        read_only=True,
    ),
    ToolSpec(
        "open_nodes",
        "read",
        "The named nodes, their immediate neighbours and the edges between them, with provenance.",
        OpenNodesArgs,
        Subgraph,
        open_nodes,
        read_only=True,
    ),
    ToolSpec(
        "search_nodes",
        "read",
        "Case-insensitive substring search over labels, keys and properties; returns matches, "
        "their neighbours and the edges between, paged by cursor.",
        SearchNodesArgs,
        Subgraph,
        search_nodes,
        read_only=True,
    ),
    ToolSpec(
        "neighbors",
        "read",
        "The k-hop neighbourhood of a node (both directions), optionally one relationship type.",
        NeighborsArgs,
        Subgraph,
        neighbors,
        read_only=True,
    ),
    ToolSpec(
        "find_path",
        "read",
        "The shortest path between two nodes (breadth-first, either direction, max_depth hops).",
        FindPathArgs,
        PathResult,
        find_path,
        read_only=True,
    ),
    ToolSpec(
        "node_history",
        "read",
        "The provenance trail of one node: every event that touched it, with agent, time, "
        "source, extraction method and confidence.",
        NodeHistoryArgs,
        NodeHistory,
        node_history,
        read_only=True,
    ),
)


# -- auditor tools ------------------------------------------------------------------------


class AuditEventsArgs(BaseModel):
    model_config = _ARGS

    agent: StrictStr | None = None
    types: list[StrictStr] | None = None
    node: NodeRefArgs | None = None
    since: StrictStr | None = Field(default=None, description="ISO 8601 time")
    until: StrictStr | None = Field(default=None, description="ISO 8601 time")
    limit: StrictInt = Field(default=50, ge=1, le=500)
    cursor: StrictStr | None = None


class AuditEvent(BaseModel):
    model_config = _ARGS

    seq: int
    occurred_at: str
    type: str
    agent: str
    session: str | None
    transport: str
    payload: dict[str, Any]
    provenance: dict[str, Any] | None
    hash: str


class AuditEvents(BaseModel):
    model_config = _ARGS

    events: list[AuditEvent]
    next_cursor: str | None


class IntegrityView(BaseModel):
    model_config = _ARGS

    ok: bool
    head_seq: int
    head_hash: str
    checks: list[dict[str, Any]]


def _moment(text: str | None, field: str) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT, f"{field} is not an ISO 8601 time", {"field": field}
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def audit_events(call: ToolCall, arguments: dict[str, Any]) -> AuditEvents:
    args = parse_request(AuditEventsArgs, arguments)
    try:
        after = int(args.cursor) if args.cursor else 0
    except ValueError:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT, "cursor is not one this tool returned", {"field": "cursor"}
        ) from None
    stream = None
    if args.node is not None:
        stream = node_stream(call.reader.identity(_ref(args.node), _schema_or_none(call.gate)))
    page = call.gate.log.read(
        after_seq=after,
        limit=args.limit,
        agent=args.agent,
        types=args.types,
        stream=stream,
        since=_moment(args.since, "since"),
        until=_moment(args.until, "until"),
    )
    return AuditEvents(
        events=[
            AuditEvent(
                seq=e.seq,
                occurred_at=format_timestamp(e.occurred_at),
                type=e.type,
                agent=e.actor.agent,
                session=e.actor.session,
                transport=e.actor.transport,
                payload=e.payload,
                provenance=e.provenance,
                hash=e.hash,
            )
            for e in page.events
        ],
        next_cursor=str(page.next_after) if page.next_after is not None else None,
    )


def integrity_report(call: ToolCall, arguments: dict[str, Any]) -> IntegrityView:
    parse_request(NoArgs, arguments)
    report = call.gate.verify()
    seq, digest = call.gate.log.head()
    return IntegrityView(
        ok=report.ok,
        head_seq=seq,
        head_hash=digest,
        checks=[{"name": c.name, "ok": c.ok, "detail": c.detail} for c in report.checks],
    )


AUDIT_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "audit_events",
        "audit",
        "The event log, filtered (agent, event types, one node, time range) and paged: "
        "every accepted write with its actor, provenance and hash.",
        AuditEventsArgs,
        AuditEvents,
        audit_events,
        read_only=True,
    ),
    ToolSpec(
        "integrity_report",
        "audit",
        "Recompute the hash chain, check the append-only triggers and compare the read model "
        "with a replay; returns each check and the head to anchor.",
        NoArgs,
        IntegrityView,
        integrity_report,
        read_only=True,
    ),
)
BUILTIN_TOOLS: tuple[ToolSpec, ...] = GATE_TOOLS + AUDIT_TOOLS
