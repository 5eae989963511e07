"""The gate's own write tools (seed 000): each hands the agent's arguments to the gate untouched,
so the event's ``request`` is exactly what the agent sent; the gate decides."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from writegate.gate.models import (
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
from writegate.gate.server.tools import ToolCall, ToolSpec, tool
from writegate.gate.writing import (
    DELETE_NODE,
    DELETE_RELATIONSHIP,
    WRITE_NODE,
    WRITE_RELATIONSHIP,
)

IDEMPOTENCY = "Retrying with the same key returns the first result and writes nothing again."


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
        description="Operations applied as one, all or none: each is {op: write_node | "
        "write_relationship | delete_node | delete_relationship, ...that tool's arguments}.",
    )


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@tool("write", family="generic")
def write_node(call: ToolCall, args: WriteNodeArgs) -> WriteNodeResult | ProposedResult | Rejected:
    """Create or update one node (merged on its label and merge keys). The label is checked
    against the schema (synonyms are remapped), properties are type-checked, and the
    provenance (confidence from reliability and extraction_method) is computed, not taken.
    The values it already has append nothing (status unchanged), unless from a new agent,
    source or method: then corroborated (no new version; its confidence rises)."""
    return call.gate.writer.single(WRITE_NODE, call.raw, call.actor, call.guard)


@tool("write", family="generic")
def write_relationship(
    call: ToolCall, args: WriteRelationshipArgs
) -> WriteRelationshipResult | ProposedResult | Rejected:
    """Create or update one relationship between two nodes named by label and keys;
    endpoint_policy merge_endpoints creates missing endpoints as stub nodes. Said again, it
    is unchanged or corroborated as write_node is."""
    return call.gate.writer.single(WRITE_RELATIONSHIP, call.raw, call.actor, call.guard)


@tool("write", destructive=True, family="generic")
def delete_node(call: ToolCall, args: DeleteNodeArgs) -> DeleteNodeResult | Rejected:
    """Delete one node (recorded as an event with provenance; the log keeps its history);
    detach also deletes its relationships."""
    return call.gate.writer.deletion(DELETE_NODE, call.raw, call.actor, call.guard)


@tool("write", destructive=True, family="generic")
def delete_relationship(
    call: ToolCall, args: DeleteRelationshipArgs
) -> DeleteRelationshipResult | Rejected:
    """Delete one relationship (recorded as an event with provenance)."""
    return call.gate.writer.deletion(DELETE_RELATIONSHIP, call.raw, call.actor, call.guard)


@tool("write", destructive=True, family="generic")
def write_batch(call: ToolCall, args: WriteBatchArgs) -> BatchResult | Rejected:
    """Several writes accepted or rejected as one; a rejection names the failing item."""
    return call.gate.writer.batch(args.items, args.idempotency_key, call.actor, call.guard)


@tool("schema")
def refresh_schema_cache(call: ToolCall, args: NoArgs) -> RefreshResult | Rejected:
    """Reload the schema from its source and swap it in atomically; the per-label tools
    follow and every client connected to this server is told the tool list changed."""
    return call.gate.refresh_schema_cache()


WRITE_TOOLS: tuple[ToolSpec, ...] = (
    write_node,
    write_relationship,
    delete_node,
    delete_relationship,
    write_batch,
    refresh_schema_cache,
)
