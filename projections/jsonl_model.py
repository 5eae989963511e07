"""The current graph held in memory: what the JSONL snapshot renders from.

The same rules as the state read model (``projections.state``): a null property removes
it, a relationship creates missing endpoints as stubs, a node write clears the stub flag,
the remap breadcrumb is kept. ``tests/projections/test_jsonl.py`` checks the two agree on
a full history. It lives in memory because a snapshot is rebuilt from the log anyway; an
SQLite upsert per event would cost three times the whole of this. Records keep only what
the snapshot renders (of the provenance: ``CITED``), so a large graph stays small in memory;
rendering it is bound by memory latency more than by anything the CPU does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from writegate.eventlog import EventCore
from writegate.language import (
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipDeleted,
    RelationshipWritten,
    WriteProvenance,
    payload_of,
    provenance_of,
)
from writegate.projections.state import merge_properties

CITED = ("confidence", "source", "extraction_method")  # the provenance a snapshot shows


def cited(provenance: WriteProvenance | None) -> tuple[Any, ...]:
    """The ``CITED`` provenance values, in that order."""
    if provenance is None:
        return (None,) * len(CITED)
    return (provenance.confidence, provenance.source, provenance.extraction_method)


@dataclass(slots=True)
class NodeRecord:
    label: str
    keys: dict[str, Any]
    properties: dict[str, Any]
    cited: tuple[Any, ...]
    stub: bool
    remapped_from: str | None
    updated_at: datetime  # formatted when rendered: a node is rendered once, written many times
    updated_by: str


@dataclass(slots=True)
class EdgeRecord:
    type: str
    start: str
    end: str
    properties: dict[str, Any]
    confidence: Any


@dataclass
class GraphModel:
    nodes: dict[str, NodeRecord] = field(default_factory=dict)
    edges: dict[str, EdgeRecord] = field(default_factory=dict)

    def clear(self) -> None:
        self.nodes.clear()
        self.edges.clear()

    def apply(self, event: EventCore) -> None:
        match payload_of(event):
            case NodeWritten(node=node, properties=properties):
                self._upsert(event, node, properties, stub=False)
            case RelationshipWritten() as written:
                for ref in written.stubs_created:
                    if ref.identity not in self.nodes:
                        self._upsert(event, ref, {}, stub=True)
                current = self.edges.get(written.identity)
                provenance = provenance_of(event)
                self.edges[written.identity] = EdgeRecord(
                    written.type,
                    written.from_node.identity,
                    written.to_node.identity,
                    merge_properties(current.properties if current else {}, written.properties),
                    provenance.confidence if provenance else None,
                )
            case NodeDeleted(node=node):
                self.nodes.pop(node.identity, None)
            case RelationshipDeleted(identity=identity):
                self.edges.pop(identity, None)
            case _:
                pass

    def _upsert(
        self, event: EventCore, ref: NodeRef, changes: dict[str, Any], *, stub: bool
    ) -> None:
        current = self.nodes.get(ref.identity)
        base = current.properties if current else {}
        self.nodes[ref.identity] = NodeRecord(
            ref.label,
            ref.keys,
            merge_properties({**base, **ref.keys}, changes),
            cited(provenance_of(event)),
            stub,
            ref.remapped_from or (current.remapped_from if current else None),
            event.occurred_at,
            event.actor.agent,
        )
