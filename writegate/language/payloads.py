"""One model per event type, the provenance of a write, and the two ways across the log.

``draft`` turns a typed payload into the ``DraftEvent`` the log appends (the stored bytes
are the model's ``stored()`` form, which is exactly what the gate always stored), and
``payload_of`` turns a stored event back into its typed payload. Reading is the hot path
of every replay, so stored payloads are rebuilt without validation: the log wrote and
hashed them, and ``tests/language`` checks the shortcut against full validation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any, ClassVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import DraftEvent, EventCore
from writegate.eventlog.events import trusted
from writegate.language.identities import NodeRef, relationship_stream

_MODEL = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def _unset(value: object) -> bool:
    return value is None


class Payload(BaseModel):
    """What one event says happened; ``event_type`` is the type the log records it under."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    event_type: ClassVar[str]

    def stored(self) -> dict[str, Any]:
        """The payload as the log stores it (JSON-ready, aliases, unset markers left out)."""
        return self.model_dump(mode="json", by_alias=True)

    @property
    def subject(self) -> str:
        """What the event is about, in one string (an identity, a schema version)."""
        return ""


class GraphPayload(Payload):
    """A change to the graph; ``batch_item`` numbers it within the batch it came in."""

    batch_item: int | None = Field(default=None, exclude_if=_unset)


class NodeWritten(GraphPayload):
    event_type: ClassVar[str] = "node.written"

    node: NodeRef
    properties: dict[str, Any]  # the change, as SET n += properties (null removes)
    created: bool
    stub_resolved: bool  # the node existed only as a relationship's endpoint until now

    @property
    def subject(self) -> str:
        return self.node.identity


class RelationshipWritten(GraphPayload):
    event_type: ClassVar[str] = "relationship.written"

    identity: str
    type: str
    remapped_from: str | None
    from_node: NodeRef = Field(alias="from")
    to_node: NodeRef = Field(alias="to")
    properties: dict[str, Any]
    created: bool
    stubs_created: list[NodeRef]  # endpoints this write created (endpoint_policy=merge_endpoints)

    @property
    def stream(self) -> str:
        return relationship_stream(self.identity)

    @property
    def subject(self) -> str:
        return self.identity


class NodeDeleted(GraphPayload):
    event_type: ClassVar[str] = "node.deleted"

    node: NodeRef
    detached: list[str]  # identities of the relationships deleted first (detach)

    @property
    def subject(self) -> str:
        return self.node.identity


class RelationshipDeleted(GraphPayload):
    event_type: ClassVar[str] = "relationship.deleted"

    identity: str
    type: str
    from_identity: str = Field(alias="from")
    to_identity: str = Field(alias="to")
    cascade_of: str | None  # the node whose detached deletion this was part of

    @property
    def stream(self) -> str:
        return relationship_stream(self.identity)

    @property
    def subject(self) -> str:
        return self.identity


class SchemaPublished(Payload):
    event_type: ClassVar[str] = "schema.published"

    document: dict[str, Any]  # the schema document, as published (gate.schema parses it)
    version: str
    # what it changed and its impact on live data (gate.schema.diff's SchemaDiff; absent
    # from events published before the diff was recorded)
    diff: dict[str, Any] | None = Field(default=None, exclude_if=_unset)

    @property
    def subject(self) -> str:
        return self.version


class UnknownPayload(Payload):
    """An event type this version does not know (a newer writer's): carried, not interpreted."""

    model_config = ConfigDict(frozen=True, extra="allow")
    event_type: ClassVar[str] = ""


GRAPH_PAYLOADS: tuple[type[GraphPayload], ...] = (
    NodeWritten,
    RelationshipWritten,
    NodeDeleted,
    RelationshipDeleted,
)
ALL_PAYLOADS: tuple[type[Payload], ...] = (*GRAPH_PAYLOADS, SchemaPublished)
PAYLOADS: dict[str, type[Payload]] = {model.event_type: model for model in ALL_PAYLOADS}
EVENT_TYPES: tuple[str, ...] = tuple(PAYLOADS)
GRAPH_EVENT_TYPES: tuple[str, ...] = tuple(model.event_type for model in GRAPH_PAYLOADS)


class WriteProvenance(BaseModel):
    """Where a write's claim came from and how far to trust it: declared by the writer
    (``source``, ``extraction_method``, ``reliability``), computed by the gate (the rest)."""

    model_config = _MODEL

    source: str
    extraction_method: str
    reliability: float
    confidence: float
    formula: str
    write_gate_version: str
    schema_version: str

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


# -- writing ---------------------------------------------------------------------------


def draft(
    payload: Payload,
    streams: Sequence[str],
    *,
    provenance: WriteProvenance | None = None,
    request: dict[str, Any] | None = None,
    expected: Mapping[str, int] | None = None,
) -> DraftEvent:
    """The event the log will append for ``payload`` (it adds seq, time, actor and hashes)."""
    return DraftEvent(
        type=payload.event_type,
        payload=payload.stored(),
        streams=tuple(streams),
        provenance=provenance.stored() if provenance is not None else None,
        request=request,
        expected_versions=dict(expected or {}),
    )


# -- reading ---------------------------------------------------------------------------


def payload_of(event: EventCore) -> Payload:
    """The typed payload of a stored event (``UnknownPayload`` for a type this version lacks)."""
    model = PAYLOADS.get(event.type)
    if model is None:
        return UnknownPayload.model_validate(event.payload)
    payload: Payload = _reader(model)(event.payload)
    return payload


def provenance_of(event: EventCore) -> WriteProvenance | None:
    """The provenance of a write (``None`` for events that record none, like a schema)."""
    if event.provenance is None:
        return None
    return trusted(WriteProvenance, _complete(WriteProvenance, event.provenance))


Reader = Callable[[Mapping[str, Any]], Any]
_REQUIRED = object()


@cache
def _reader(model: type[BaseModel]) -> Reader:
    """A function building ``model`` from its stored form without validating it: fields are
    copied, or built as a ``NodeRef`` (or a list of them) where the model says so."""
    plain: list[tuple[str, str, Any]] = []
    nested: list[tuple[str, str, Reader]] = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        annotation = info.annotation
        if annotation is NodeRef:
            nested.append((name, key, _reader(NodeRef)))
        elif get_origin(annotation) is list and get_args(annotation) == (NodeRef,):
            nested.append((name, key, _read_refs))
        else:
            plain.append((name, key, _REQUIRED if info.is_required() else info.get_default()))

    def read(data: Mapping[str, Any]) -> Any:
        get = data.get
        values = {name: get(key, default) for name, key, default in plain}
        for name, key, build in nested:
            value = get(key)
            values[name] = build(value) if value is not None else None
        if _REQUIRED in values.values():
            raise ValueError(f"a stored {model.__name__} lacks a field: {dict(data)}")
        return trusted(model, values)

    return read


def _read_refs(values: Any) -> list[NodeRef]:
    single = _reader(NodeRef)
    return [single(v) for v in values]


def _complete(model: type[BaseModel], data: Mapping[str, Any]) -> dict[str, Any]:
    return {name: data.get(name) for name in model.model_fields}
