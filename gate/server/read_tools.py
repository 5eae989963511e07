"""Bounded reads that carry provenance (seed 001 §4.5, seed 004): what an agent reads back.

Each is the ``GraphReader`` function of the same name (``gate.reads.reader``), which the CLI's
read commands call too, so an agent and an operator asking the same question get the
same answer.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import Keys
from writegate.gate.moments import InCalendar
from writegate.gate.reads.answers import QueryResult
from writegate.gate.reads.around import MAX_NEIGHBORS, NEIGHBORS
from writegate.gate.reads.query import DEFAULT as DEFAULT_QUERY
from writegate.gate.reads.query import MAX_OBSERVATIONS, MAX_QUERY_DEPTH, MAX_TOP_K
from writegate.gate.reads.reader import MAX_DEPTH, NodeHistory, PathResult, Subgraph
from writegate.gate.schema import LoadedSchema, SchemaSourceUnavailable
from writegate.gate.schema.registry import describe_registry, named_labels
from writegate.gate.server.tools import ToolCall, ToolSpec, tool

_ARGS = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
LIMIT = "At most this many nodes."
RTYPE = "Follow only relationships of this type."


class NodeRefArgs(BaseModel):
    model_config = _ARGS

    label: StrictStr = Field(description="Its label.")
    merge_keys: Keys = Field(description='Its merge keys, e.g. {"name": "Ada"}.')

    def ref(self) -> dict[str, Any]:
        return {"label": self.label, "merge_keys": dict(self.merge_keys)}


class OpenNodesArgs(BaseModel):
    model_config = _ARGS

    nodes: list[NodeRefArgs] = Field(min_length=1, max_length=500, description="The nodes to open.")
    as_of: InCalendar | None = Field(
        default=None,
        description="Record time: the graph as the log knew it then.",
    )
    valid_at: InCalendar | None = Field(
        default=None,
        description="Valid time: what was true then.",
    )


class SearchNodesArgs(BaseModel):
    model_config = _ARGS

    query: StrictStr = Field(
        min_length=1,
        max_length=500,
        description="Words to find in labels, keys and text.",
    )
    limit: StrictInt = Field(default=25, ge=1, le=500, description="At most this many matches.")
    cursor: StrictStr | None = Field(default=None, description="The last page's next_cursor.")
    neighbors: StrictInt = Field(
        default=NEIGHBORS,
        ge=0,
        le=MAX_NEIGHBORS,
        description="Relationships per match (more_relationships counts the rest).",
    )


class NeighborsArgs(BaseModel):
    model_config = _ARGS

    node: NodeRefArgs = Field(description="Where to start.")
    depth: StrictInt = Field(
        default=1, ge=1, le=MAX_DEPTH, description="How many hops to go (both directions)."
    )
    relationship_type: StrictStr | None = Field(default=None, description=RTYPE)
    limit: StrictInt = Field(default=100, ge=1, le=500, description=LIMIT)


class FindPathArgs(BaseModel):
    model_config = _ARGS

    from_node: NodeRefArgs = Field(alias="from", description="The first node.")
    to_node: NodeRefArgs = Field(alias="to", description="The last node.")
    max_depth: StrictInt = Field(
        default=MAX_DEPTH, ge=1, le=MAX_DEPTH, description="The longest path to look for."
    )
    relationship_type: StrictStr | None = Field(default=None, description=RTYPE)


class NodeHistoryArgs(BaseModel):
    model_config = _ARGS

    node: NodeRefArgs = Field(description="The node whose trail to read.")
    limit: StrictInt = Field(default=50, ge=1, le=500, description="At most this many events.")
    cursor: StrictStr | None = Field(default=None, description="The last page's next_cursor.")


class GraphQueryArgs(BaseModel):
    """Spelled as the Graph MCP Tools page spells ``graph_query`` (``topK``); the snake_case
    names are accepted too."""

    model_config = ConfigDict(**_ARGS, alias_generator=to_camel)

    query: StrictStr = Field(
        min_length=1, max_length=500, description="The question, in plain words."
    )
    top_k: StrictInt = Field(
        default=DEFAULT_QUERY.top_k, ge=1, le=MAX_TOP_K, description="At most this many seed nodes."
    )
    neighborhood_depth: StrictInt = Field(
        default=DEFAULT_QUERY.depth,
        ge=1,
        le=MAX_QUERY_DEPTH,
        description="Hops to expand from each seed.",
    )
    observations: StrictInt = Field(
        default=DEFAULT_QUERY.observations,
        ge=1,
        le=MAX_OBSERVATIONS,
        description="At most this many observations (texts kept).",
    )
    relationship_filter: StrictStr | None = Field(default=None, description=RTYPE)
    as_of: InCalendar | None = Field(
        default=None,
        description="Record time: the graph as the log knew it then.",
    )
    valid_at: InCalendar | None = Field(
        default=None, description="Valid time: what was true then."
    )


class GetSchemaArgs(BaseModel):
    model_config = _ARGS

    labels: list[StrictStr] | None = Field(
        default=None, max_length=500, description="Only these labels (default: all)."
    )


class SchemaView(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str
    document: dict[str, Any]


def schema_or_none(call: ToolCall) -> LoadedSchema | None:
    """Reads work without a schema: labels are then taken as given."""
    try:
        return call.gate.current_schema()
    except SchemaSourceUnavailable:
        return None


@tool("read", read_only=True)
def get_schema(call: ToolCall, args: GetSchemaArgs) -> SchemaView:
    """The schema writes are checked against: each label's merge keys and properties (types,
    enums, relationships), relationship types and their ends; labels: only those."""
    try:
        snapshot = call.gate.current_schema()
    except SchemaSourceUnavailable as exc:
        raise GateRejection(
            ErrorCode.SCHEMA_SOURCE_UNAVAILABLE,
            f"{exc} (an operator publishes one: writegate --db LOG schema publish FILE)",
            {"previous_snapshot_kept": False},
        ) from exc
    registry = snapshot.registry
    labels = None if args.labels is None else named_labels(registry, args.labels)
    return SchemaView(schema_version=snapshot.version, document=describe_registry(registry, labels))


@tool("read", read_only=True, gated=True)
def open_nodes(call: ToolCall, args: OpenNodesArgs) -> Subgraph:
    """The named nodes, their neighbours and the edges between them, with provenance."""
    return call.reader.open_nodes(
        [n.ref() for n in args.nodes],
        schema_or_none(call),
        as_of=args.as_of,
        valid_at=args.valid_at,
    )


@tool("read", read_only=True, gated=True)
def search_nodes(call: ToolCall, args: SearchNodesArgs) -> Subgraph:
    """Nodes matching the query's words, best first, each with a few relationships. Plain
    words, no search syntax."""
    return call.reader.search_nodes(args.query, args.limit, args.cursor, args.neighbors)


@tool("read", read_only=True, gated=True)
def graph_query(call: ToolCall, args: GraphQueryArgs) -> QueryResult:
    """A question in words: ranked triplets around the nodes its words find, with their
    provenance, why they ranked, and the observations behind them."""
    return call.reader.graph_query(
        args.query,
        top_k=args.top_k,
        depth=args.neighborhood_depth,
        relationship_type=args.relationship_filter,
        as_of=args.as_of,
        valid_at=args.valid_at,
        schema=schema_or_none(call),
        observations=args.observations,
    )


@tool("read", read_only=True, gated=True)
def neighbors(call: ToolCall, args: NeighborsArgs) -> Subgraph:
    """The k-hop neighbourhood of a node (both directions)."""
    return call.reader.neighbors(
        args.node.ref(),
        depth=args.depth,
        relationship_type=args.relationship_type,
        limit=args.limit,
        schema=schema_or_none(call),
    )


@tool("read", read_only=True, gated=True)
def find_path(call: ToolCall, args: FindPathArgs) -> PathResult:
    """The shortest path between two nodes (edges in either direction)."""
    return call.reader.find_path(
        args.from_node.ref(),
        args.to_node.ref(),
        max_depth=args.max_depth,
        relationship_type=args.relationship_type,
        schema=schema_or_none(call),
    )


@tool("read", read_only=True)
def node_history(call: ToolCall, args: NodeHistoryArgs) -> NodeHistory:
    """Every event that touched one node, with its provenance."""
    return call.reader.node_history(
        args.node.ref(), limit=args.limit, cursor=args.cursor, schema=schema_or_none(call)
    )


READ_TOOLS: tuple[ToolSpec, ...] = (
    get_schema,
    open_nodes,
    search_nodes,
    graph_query,
    neighbors,
    find_path,
    node_history,
)
