"""The gate's own write tools (seed 000): each hands the agent's arguments to the gate untouched,
so the event's ``request`` is exactly what the agent sent; the gate decides."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from writegate.gate.models import (
    IDEMPOTENCY,
    BatchResult,
    DeleteNodeRequest,
    DeleteNodeResult,
    DeleteRelationshipRequest,
    DeleteRelationshipResult,
    ProposedResult,
    RefreshResult,
    Rejected,
    WriteNodeRequest,
    WriteNodeResult,
    WriteRelationshipRequest,
    WriteRelationshipResult,
)
from writegate.gate.relationship_properties import written_with_edges
from writegate.gate.server.tools import ToolCall, ToolSpec, tool
from writegate.gate.writing import (
    DELETE_NODE,
    DELETE_RELATIONSHIP,
    WRITE_NODE,
    WRITE_RELATIONSHIP,
)


class Idempotent(BaseModel):
    idempotency_key: StrictStr | None = Field(
        default=None, min_length=1, max_length=200, description=IDEMPOTENCY
    )


class WriteNodeArgs(WriteNodeRequest, Idempotent):
    pass


class WriteRelationshipArgs(WriteRelationshipRequest, Idempotent):
    pass


class DeleteNodeArgs(DeleteNodeRequest, Idempotent):
    pass


class DeleteRelationshipArgs(DeleteRelationshipRequest, Idempotent):
    pass


class WriteBatchArgs(Idempotent):
    model_config = ConfigDict(extra="forbid", frozen=True)

    items: list[dict[str, object]] = Field(
        min_length=1,
        description="Each {op: write_node, ...its arguments}; op also delete_node, "
        "write_relationship, delete_relationship.",
    )


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@tool("write", family="generic")
def write_node(
    call: ToolCall, args: WriteNodeArgs
) -> WriteNodeResult | ProposedResult | BatchResult | Rejected:
    """Create or update one node by label and merge keys, checked against the schema
    (get_schema); confidence from reliability and extraction_method. Said again: unchanged
    or corroborated. A relationship property writes its edge."""
    if (done := written_with_edges(call.gate, call.raw, call.actor, call.guard)) is not None:
        return done
    return call.gate.writer.single(WRITE_NODE, call.raw, call.actor, call.guard)


@tool("write", family="generic")
def write_relationship(
    call: ToolCall, args: WriteRelationshipArgs
) -> WriteRelationshipResult | ProposedResult | Rejected:
    """Create or update one relationship between two nodes named by label and merge keys;
    said again, as write_node."""
    return call.gate.writer.single(WRITE_RELATIONSHIP, call.raw, call.actor, call.guard)


@tool("write", destructive=True, family="generic")
def delete_node(call: ToolCall, args: DeleteNodeArgs) -> DeleteNodeResult | Rejected:
    """Delete one node (an event; its history stays in the log)."""
    return call.gate.writer.deletion(DELETE_NODE, call.raw, call.actor, call.guard)


@tool("write", destructive=True, family="generic")
def delete_relationship(
    call: ToolCall, args: DeleteRelationshipArgs
) -> DeleteRelationshipResult | Rejected:
    """Delete one relationship (an event; its history stays in the log)."""
    return call.gate.writer.deletion(DELETE_RELATIONSHIP, call.raw, call.actor, call.guard)


@tool("write", destructive=True, family="generic")
def write_batch(call: ToolCall, args: WriteBatchArgs) -> BatchResult | Rejected:
    """Several writes as one, all or none; a refusal names the failing item."""
    key, unseen = args.idempotency_key, call.unseen or None
    return call.gate.writer.batch(args.items, key, call.actor, call.guard, unseen=unseen)


@tool("schema")
def refresh_schema_cache(call: ToolCall, args: NoArgs) -> RefreshResult | Rejected:
    """Reload the schema from its source; clients are told the tools changed."""
    return call.gate.refresh_schema_cache()


WRITE_TOOLS: tuple[ToolSpec, ...] = (
    write_node,
    write_relationship,
    delete_node,
    delete_relationship,
    write_batch,
    refresh_schema_cache,
)
