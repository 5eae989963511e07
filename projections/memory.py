"""The current graph held in memory: what the JSONL snapshot renders from.

The same rules as the state read model (``projections.state``): a null property removes
it, a relationship creates missing endpoints as stubs, a node write clears the stub flag,
the remap breadcrumb is kept. ``tests/projections/test_jsonl.py`` checks the two agree on
a full history. It lives in memory because a snapshot is rebuilt from the log anyway; an
SQLite upsert per event would cost three times the whole of this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventlog import Event
from eventlog.events import format_timestamp
from projections.state import merge_properties
from projections.vocabulary import (
    NODE_DELETED,
    NODE_WRITTEN,
    RELATIONSHIP_DELETED,
    RELATIONSHIP_WRITTEN,
)


@dataclass(slots=True)
class NodeRecord:
    label: str
    keys: dict[str, Any]
    properties: dict[str, Any]
    provenance: dict[str, Any]
    stub: bool
    remapped_from: str | None
    updated_at: str
    updated_by: str


@dataclass(slots=True)
class EdgeRecord:
    type: str
    start: str
    end: str
    properties: dict[str, Any]
    provenance: dict[str, Any]


@dataclass
class GraphModel:
    nodes: dict[str, NodeRecord] = field(default_factory=dict)
    edges: dict[str, EdgeRecord] = field(default_factory=dict)

    def clear(self) -> None:
        self.nodes.clear()
        self.edges.clear()

    def apply(self, event: Event) -> None:
        payload = event.payload
        if event.type == NODE_WRITTEN:
            self._upsert(event, payload["node"], payload["properties"], stub=False)
        elif event.type == RELATIONSHIP_WRITTEN:
            for ref in payload["stubs_created"]:
                if ref["identity"] not in self.nodes:
                    self._upsert(event, ref, {}, stub=True)
            current = self.edges.get(payload["identity"])
            self.edges[payload["identity"]] = EdgeRecord(
                payload["type"],
                payload["from"]["identity"],
                payload["to"]["identity"],
                merge_properties(current.properties if current else {}, payload["properties"]),
                event.provenance or {},
            )
        elif event.type == NODE_DELETED:
            self.nodes.pop(payload["node"]["identity"], None)
        elif event.type == RELATIONSHIP_DELETED:
            self.edges.pop(payload["identity"], None)

    def _upsert(
        self, event: Event, ref: dict[str, Any], changes: dict[str, Any], *, stub: bool
    ) -> None:
        current = self.nodes.get(ref["identity"])
        base = current.properties if current else {}
        self.nodes[ref["identity"]] = NodeRecord(
            ref["label"],
            ref["keys"],
            merge_properties({**base, **ref["keys"]}, changes),
            event.provenance or {},
            stub,
            ref.get("remapped_from") or (current.remapped_from if current else None),
            format_timestamp(event.occurred_at),
            event.actor.agent,
        )
