"""The JSONL snapshot as writegate rendered it before its model moved to SQLite: the whole
graph in Python dicts, rendered in one go. Kept as the reference the projector's bytes are
compared with (``test_jsonl``): the file must not change because its model did."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from writegate.eventlog import EventCore
from writegate.language import (
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipDeleted,
    RelationshipWritten,
    payload_of,
    provenance_of,
)
from writegate.projections.jsonl_lines import origin_lines, property_lines, text
from writegate.projections.jsonl_records import cited
from writegate.projections.state import merge_properties


@dataclass(slots=True)
class Node:
    label: str
    keys: dict[str, Any]
    properties: dict[str, Any]
    cited: tuple[Any, ...]
    stub: bool
    remapped_from: str | None
    resolved_from: str | None
    updated_at: datetime
    updated_by: str


@dataclass(slots=True)
class Edge:
    type: str
    start: str
    end: str
    properties: dict[str, Any]
    confidence: Any


def model(events: Iterable[EventCore]) -> tuple[dict[str, Node], dict[str, Edge]]:
    nodes: dict[str, Node] = {}
    edges: dict[str, Edge] = {}

    def upsert(
        event: EventCore,
        ref: NodeRef,
        changes: dict[str, Any],
        stub: bool,
        resolved: str | None = None,
    ) -> None:
        current = nodes.get(ref.identity)
        base = current.properties if current else {}
        nodes[ref.identity] = Node(
            ref.label,
            ref.keys,
            merge_properties({**base, **ref.keys}, changes),
            cited(provenance_of(event)),
            stub,
            ref.remapped_from or (current.remapped_from if current else None),
            resolved or (current.resolved_from if current else None),
            event.occurred_at,
            event.actor.agent,
        )

    for event in events:
        match payload_of(event):
            case NodeWritten(node=node, properties=properties, resolved_from=resolved):
                upsert(event, node, properties, False, resolved)
            case RelationshipWritten() as written:
                for ref in written.stubs_created:
                    if ref.identity not in nodes:
                        upsert(event, ref, {}, True)
                current = edges.get(written.identity)
                provenance = provenance_of(event)
                edges[written.identity] = Edge(
                    written.type,
                    written.from_node.identity,
                    written.to_node.identity,
                    merge_properties(current.properties if current else {}, written.properties),
                    provenance.confidence if provenance else None,
                )
            case NodeDeleted(node=node):
                nodes.pop(node.identity, None)
            case RelationshipDeleted(identity=identity):
                edges.pop(identity, None)
            case _:
                pass
    return nodes, edges


def render(events: Iterable[EventCore], fmt: str) -> bytes:
    nodes, edges = model(events)
    order = sorted(nodes)

    def plain(keys: dict[str, Any], identity: str) -> str:
        if "name" in keys:
            return text(keys["name"])
        return text(next(iter(keys.values()))) if len(keys) == 1 else identity

    first = {identity: plain(nodes[identity].keys, identity) for identity in order}
    taken = Counter(first.values())
    names = {
        identity: f"{name} ({nodes[identity].label})" if taken[name] > 1 else name
        for identity, name in first.items()
    }
    out = []
    mesh = fmt == "memorymesh"
    for identity in order:
        node = nodes[identity]
        lines = property_lines(node.properties, node.keys) + origin_lines(
            node.cited,
            node.updated_by,
            node.updated_at,
            node.remapped_from,
            node.stub,
            node.resolved_from,
        )
        if mesh:
            record: dict[str, Any] = {
                "type": "node",
                "name": names[identity],
                "nodeType": node.label,
                "metadata": lines,
            }
        else:
            record = {
                "type": "entity",
                "name": names[identity],
                "entityType": node.label,
                "observations": lines,
            }
        out.append(orjson.dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE))
    for identity in sorted(edges):
        edge = edges[identity]
        if mesh:
            record = {
                "type": "edge",
                "from": names[edge.start],
                "to": names[edge.end],
                "edgeType": edge.type,
                "weight": edge.confidence,
            }
        else:
            record = {
                "type": "relation",
                "from": names[edge.start],
                "to": names[edge.end],
                "relationType": edge.type,
            }
        out.append(orjson.dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE))
    return b"".join(out)
