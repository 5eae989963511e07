"""Replaying history through today's vocabulary, without touching the log.

When the schema learns a remap (``person -> Person``) or merges synonym relationship types
(seed 003's vocabulary consolidation: ``WORKS_AT -> WORKS_FOR``), a rebuild with ``--regate``
rewrites each graph event on its way to the projection: the name the agent originally
wrote (the remap breadcrumb, else the label or type itself) is resolved again against the
current registry. Identities follow their labels, so events that named the old identity
(deletions, relationships) are mapped the same way; nodes that now resolve to one identity
merge. The breadcrumb keeps the original name. The log and the gate's state model are
never regated — they record what was accepted, as it was accepted.
"""

from __future__ import annotations

from typing import Any, Protocol

from writegate.eventlog import EventCore
from writegate.eventlog.events import trusted
from writegate.projections.vocabulary import (
    NODE_DELETED,
    NODE_WRITTEN,
    RELATIONSHIP_DELETED,
    RELATIONSHIP_WRITTEN,
    node_ref,
    node_stream,
    parse_node_identity,
    relationship_identity,
    relationship_stream,
)


class Vocabulary(Protocol):
    """The part of a schema registry regating needs (``gate.schema.SchemaRegistry`` has it)."""

    def get_entry(self, label: str) -> Any: ...

    def remap_target(self, label: str) -> str | None: ...

    def get_relationship_type(self, type: str) -> Any: ...

    def relationship_remap_target(self, type: str) -> str | None: ...


class Regater:
    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self._moved: dict[str, dict[str, Any]] = {}  # identity in the log -> regated ref

    def _label(self, written: str, current: str) -> str:
        if self.vocabulary.get_entry(written) is not None:
            return written
        return self.vocabulary.remap_target(written) or current

    def _type(self, written: str, current: str) -> str:
        if self.vocabulary.get_relationship_type(written) is not None:
            return written
        return self.vocabulary.relationship_remap_target(written) or current

    def node(self, ref: dict[str, Any]) -> dict[str, Any]:
        """A payload node reference, resolved again (and remembered for later events)."""
        breadcrumb = ref.get("remapped_from")
        if breadcrumb is None and ref["identity"] in self._moved:
            return self._moved[ref["identity"]]
        written = breadcrumb.removeprefix(":") if breadcrumb else ref["label"]
        label = self._label(written, ref["label"])
        moved = node_ref(label, ref["keys"], f":{written}" if label != written else None)
        self._moved[ref["identity"]] = moved
        return moved

    def _identity(self, identity: str) -> str:
        if identity in self._moved:
            return str(self._moved[identity]["identity"])
        label, keys = parse_node_identity(identity)
        return str(self.node(node_ref(label, keys))["identity"])

    def event(self, event: EventCore) -> EventCore:
        """The event as the current schema would have written it (itself if untouched)."""
        payload = dict(event.payload)
        renamed: dict[str, str] = {}
        if event.type in (NODE_WRITTEN, NODE_DELETED):
            old = payload["node"]
            payload["node"] = self.node(old)
            renamed[node_stream(old["identity"])] = node_stream(payload["node"]["identity"])
        elif event.type == RELATIONSHIP_WRITTEN:
            written = (payload.get("remapped_from") or "").removeprefix(":") or payload["type"]
            rtype = self._type(written, payload["type"])
            payload["type"] = rtype
            payload["remapped_from"] = f":{written}" if rtype != written else None
            payload["from"], payload["to"] = self.node(payload["from"]), self.node(payload["to"])
            payload["stubs_created"] = [self.node(s) for s in payload["stubs_created"]]
            for old, new in zip(
                event.payload["stubs_created"], payload["stubs_created"], strict=True
            ):
                renamed[node_stream(old["identity"])] = node_stream(new["identity"])
            identity = relationship_identity(
                rtype, payload["from"]["identity"], payload["to"]["identity"]
            )
            renamed[relationship_stream(payload["identity"])] = relationship_stream(identity)
            payload["identity"] = identity
        elif event.type == RELATIONSHIP_DELETED:
            rtype = self._type(payload["type"], payload["type"])
            payload["from"], payload["to"] = (
                self._identity(payload["from"]),
                self._identity(payload["to"]),
            )
            identity = relationship_identity(rtype, payload["from"], payload["to"])
            renamed[relationship_stream(payload["identity"])] = relationship_stream(identity)
            payload["type"], payload["identity"] = rtype, identity
        else:
            return event
        streams = {renamed.get(s, s): v for s, v in event.streams.items()}
        core = {name: getattr(event, name) for name in EventCore.model_fields}
        return trusted(EventCore, {**core, "payload": payload, "streams": streams})
