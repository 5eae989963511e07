"""The edges a node write's relationship properties make (seed 001 §3.4).

A property declared with a ``relationship`` names another node: writing it also writes the
edge to that node (a stub if absent), and changing it moves the edge. The per-label MCP
tools, the generic ``write_node`` tool and ``writegate write node`` all build their batch
here (``request_batch`` from a ``write_node`` request as sent; ``written_with_edges`` writes
it), so a node written from any face makes the same edges and appends the same events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from writegate.gate.personal import identity_in
from writegate.gate.schema.document import RelationshipRef
from writegate.gate.schema.registry import SchemaEntry, SchemaRegistry
from writegate.language import relationship_identity

if TYPE_CHECKING:
    from writegate.eventlog import Actor
    from writegate.gate.api import Gate
    from writegate.gate.models import BatchResult, Rejected
    from writegate.gate.writing import WriteGuard
    from writegate.projections.state import NodeRow

# what an edge carries of its node's write: its provenance and valid time
_CARRIED = ("source", "extraction_method", "reliability", "observations", "valid_from", "valid_to")
_UNDONE = ("source", "extraction_method", "reliability")  # a deletion cites nothing


def entry_of(registry: SchemaRegistry, label: str) -> SchemaEntry | None:
    """The declaration ``label`` names, directly or as a declared synonym."""
    bare = label.removeprefix(":")
    return registry.get_entry(bare) or registry.get_entry(registry.remap_target(bare) or "")


def links_of(entry: SchemaEntry) -> dict[str, RelationshipRef]:
    """The label's relationship properties, each with the edge it makes."""
    return {n: p.relationship for n, p in entry.properties.items() if p.relationship}


def _values(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _edge(
    op: str, entry: SchemaEntry, rel: RelationshipRef, node: Mapping[str, Any], value: Any
) -> dict[str, Any]:
    carried = _CARRIED if op == "write_relationship" else _UNDONE
    item: dict[str, Any] = {
        "op": op,
        "type": rel.type,
        "from_label": entry.label,
        "from_keys": node["merge_keys"],
        "to_label": rel.to,
        "to_keys": {rel.key: value},
        **{k: node[k] for k in carried if k in node},
    }
    if op == "write_relationship":
        item["endpoint_policy"] = "merge_endpoints"
    return item


def current_node(gate: Gate, entry: SchemaEntry, keys: Mapping[str, Any]) -> NodeRow | None:
    """The node ``keys`` name now (through a merged duplicate's or a personal name)."""
    identity = identity_in(gate.log, gate.current_schema(), entry.label, keys)
    return gate.state.node(gate.log.connection(), identity)


def node_with_edges(
    gate: Gate, entry: SchemaEntry, node: dict[str, Any], current: NodeRow | None
) -> list[dict[str, Any]]:
    """The batch of one node write: ``node`` (a ``write_node`` item of ``entry``'s label or
    a synonym) then the edges its relationship properties make. Over a ``current`` node the
    edges of values no longer given are deleted, and the node is written only at the
    version read (unless the caller named one), so nobody moves an edge in between."""
    links = links_of(entry)
    given = {**node.get("properties", {}), **node["merge_keys"]}
    items = [node]
    if current is not None and "if_version" not in node and any(p in given for p in links):
        items = [{**node, "if_version": current.version}]
    schema = gate.current_schema() if current is not None else None
    conn = gate.log.connection()
    for prop, rel in links.items():
        if prop not in given:
            continue
        new, old = _values(given[prop]), []
        if current is not None:
            old = _values(current.properties.get(prop))
            for value in old:
                target = identity_in(gate.log, schema, rel.to, {rel.key: value})
                edge = relationship_identity(rel.type, current.identity, target)
                if value not in new and gate.state.relationship_exists(conn, edge):
                    items.append(_edge("delete_relationship", entry, rel, node, value))
        items += [_edge("write_relationship", entry, rel, node, v) for v in new if v not in old]
    return items


def touches_links(entry: SchemaEntry | None, properties: Mapping[str, Any]) -> bool:
    """Whether a write of ``properties`` names another node through a relationship property."""
    return entry is not None and any(p in properties for p in links_of(entry))


def written_with_edges(
    gate: Gate, request: Mapping[str, Any], actor: Actor, guard: WriteGuard | None
) -> BatchResult | Rejected | None:
    """A ``write_node`` request (as sent, its idempotency key too) naming another node
    through a relationship property, written as the batch it makes (``request_batch``);
    None for a plain node write. The key is bound to the request, not to the batch: a retry
    reads the graph its first try changed (the node's version, the edges it dropped) and
    makes other items from the same request."""
    asked = {k: v for k, v in request.items() if k != "idempotency_key"}
    if (items := request_batch(gate, asked)) is None:
        return None
    key = request.get("idempotency_key")
    return gate.writer.batch(items, key, actor, guard, asked=asked)


def request_batch(gate: Gate, request: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The batch a ``write_node`` request (as sent, its idempotency key aside) makes when it
    names another node through a relationship property; None for a plain node write (and
    for a request too malformed to tell: the write's own checks then say what is wrong)."""
    from writegate.gate.schema import SchemaSourceUnavailable  # noqa: PLC0415

    label, keys = request.get("label"), request.get("merge_keys")
    properties = request.get("properties") or {}
    if not (isinstance(label, str) and isinstance(keys, dict) and isinstance(properties, dict)):
        return None
    try:
        entry = entry_of(gate.current_schema().registry, label)
    except SchemaSourceUnavailable:
        return None
    if entry is None or not touches_links(entry, {**properties, **keys}):
        return None
    node = {"op": "write_node", **{k: v for k, v in request.items() if k != "idempotency_key"}}
    return node_with_edges(gate, entry, node, current_node(gate, entry, keys))
