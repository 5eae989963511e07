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
from writegate.language import (
    NodeCorroborated,
    NodeDeleted,
    NodeRef,
    NodeWritten,
    Payload,
    RelationshipCorroborated,
    RelationshipDeleted,
    RelationshipWritten,
    payload_of,
    relationship_identity,
    relationship_stream,
    said_of,
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
        self._moved: dict[str, NodeRef] = {}  # identity in the log -> regated reference

    def _label(self, written: str, current: str) -> str:
        if self.vocabulary.get_entry(written) is not None:
            return written
        return self.vocabulary.remap_target(written) or current

    def _type(self, written: str, current: str) -> str:
        if self.vocabulary.get_relationship_type(written) is not None:
            return written
        return self.vocabulary.relationship_remap_target(written) or current

    def node(self, ref: NodeRef) -> NodeRef:
        """A node reference, resolved again (and remembered for later events)."""
        breadcrumb = ref.remapped_from
        if breadcrumb is None and ref.identity in self._moved:
            return self._moved[ref.identity]
        written = breadcrumb.removeprefix(":") if breadcrumb else ref.label
        label = self._label(written, ref.label)
        moved = NodeRef.of(label, ref.keys, f":{written}" if label != written else None)
        self._moved[ref.identity] = moved
        return moved

    def _identity(self, identity: str) -> str:
        if identity in self._moved:
            return self._moved[identity].identity
        return self.node(NodeRef.parse(identity)).identity

    def event(self, event: EventCore) -> EventCore:
        """The event as the current schema would have written it (itself if untouched)."""
        renamed: dict[str, str] = {}
        regated: Payload
        match payload_of(event):
            case NodeWritten() | NodeDeleted() | NodeCorroborated() as node_event:
                moved = self.node(node_event.node)
                renamed.update(
                    zip(said_of(node_event.node.stream), said_of(moved.stream), strict=True)
                )
                regated = node_event.model_copy(update={"node": moved})
            case RelationshipWritten() as written:
                original = (written.remapped_from or "").removeprefix(":") or written.type
                rtype = self._type(original, written.type)
                start, end = self.node(written.from_node), self.node(written.to_node)
                stubs = [self.node(s) for s in written.stubs_created]
                for old, new in zip(written.stubs_created, stubs, strict=True):
                    renamed[old.stream] = new.stream
                identity = relationship_identity(rtype, start.identity, end.identity)
                renamed[written.stream] = relationship_stream(identity)
                regated = written.model_copy(
                    update={
                        "type": rtype,
                        "remapped_from": f":{original}" if rtype != original else None,
                        "from_node": start,
                        "to_node": end,
                        "stubs_created": stubs,
                        "identity": identity,
                    }
                )
            case RelationshipDeleted() | RelationshipCorroborated() as named:
                rtype = self._type(named.type, named.type)
                start_id = self._identity(named.from_identity)
                end_id = self._identity(named.to_identity)
                regated = named.model_copy(
                    update={
                        "type": rtype,
                        "from_identity": start_id,
                        "to_identity": end_id,
                        "identity": relationship_identity(rtype, start_id, end_id),
                    }
                )
                renamed[named.stream] = regated.stream
            case _:
                return event
        streams = {renamed.get(s, s): v for s, v in event.streams.items()}
        core = {name: getattr(event, name) for name in EventCore.model_fields}
        return trusted(EventCore, {**core, "payload": regated.stored(), "streams": streams})
