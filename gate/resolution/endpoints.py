"""The endpoints a relationship write would create (``endpoint_policy: merge_endpoints``)
go through entity resolution as any node creation does: a stub is a node too.

Under ``propose`` a probable duplicate refuses the write with ``POSSIBLE_DUPLICATE`` naming
the end; under ``auto`` the end lands on the existing node and the event and result say so
(``resolved_from``, by end); otherwise the stub is created and indexed under its keys, so a
later duplicate of it is met like any other node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.resolution.matching import land, met
from writegate.gate.schema.registry import SchemaEntry
from writegate.language import NodeRef
from writegate.projections.state import StateReader


@dataclass
class Endpoints:
    """Where a relationship's two ends land, and what its event says of the stubs."""

    head: NodeRef
    tail: NodeRef
    stubs: list[NodeRef] = field(default_factory=list)
    stub_keys: dict[str, list[str]] = field(default_factory=dict)
    resolved_from: dict[str, str] = field(default_factory=dict)


def settle(
    state: StateReader,
    conn: Sql,
    ends: tuple[tuple[NodeRef, SchemaEntry], tuple[NodeRef, SchemaEntry]],
    *,
    create: bool,
) -> Endpoints:
    """The ends of a relationship write, each an existing node (a merged duplicate's
    survivor for its identity) or — if ``create`` (``merge_endpoints``) — a stub to create,
    else ``ENDPOINT_NOT_FOUND``. An end that lands elsewhere than named (resolved, or a
    merged duplicate's survivor) is in ``resolved_from``, as ``write_node`` says it."""
    landed: list[NodeRef] = []
    out = Endpoints(ends[0][0], ends[1][0])
    for side, (named, entry) in zip(("from", "to"), ends, strict=True):
        if named in out.stubs:  # both ends, one stub
            landed.append(named)
            continue
        here = met(state, conn, named)  # a merged duplicate: its survivor
        ref = here.ref
        if here.row is not None:
            landed.append(ref)
            if here.aliased is not None:
                out.resolved_from[side] = here.aliased
            continue
        if not create:
            raise GateRejection(
                ErrorCode.ENDPOINT_NOT_FOUND,
                f"{side} node {ref.identity} does not exist (write it first, or "
                "use endpoint_policy='merge_endpoints')",
                {"end": side, "label": ref.label, "keys": ref.keys},
            )
        try:
            where = land(state, conn, entry, ref, None, {}, new=False)
        except GateRejection as refused:
            if refused.code != ErrorCode.POSSIBLE_DUPLICATE:
                raise
            raise GateRejection(
                refused.code,
                f"the {side} node would be created as a stub, and {refused.message}",
                {**refused.details, "end": side},
            ) from refused
        landed.append(where.ref)
        if where.resolved_from is None:
            out.stubs.append(ref)
            if where.keys is not None:
                out.stub_keys[ref.identity] = where.keys
        if (named_as := where.resolved_from or here.aliased) is not None:
            out.resolved_from[side] = named_as
    out.head, out.tail = landed
    return out
