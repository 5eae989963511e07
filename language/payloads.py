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
from threading import local
from types import NoneType, UnionType
from typing import Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Actor, DraftEvent, EventCore
from writegate.eventlog.events import trusted
from writegate.language.base import GraphPayload, Payload, Superseded, WriteProvenance, unset
from writegate.language.corroborations import NodeCorroborated, RelationshipCorroborated
from writegate.language.feedback import FeedbackGiven
from writegate.language.identities import NodeRef, relationship_stream
from writegate.language.indexing import LabelSearchable, NodesIndexed
from writegate.language.merges import NodesMerged, NodesUnmerged
from writegate.language.observations import ObservationRecorded
from writegate.language.retractions import SourceRetracted, SourceUnretracted


class NodeWritten(GraphPayload):
    event_type: ClassVar[str] = "node.written"

    node: NodeRef
    properties: dict[str, Any]  # the change, as SET n += properties (null removes)
    created: bool
    stub_resolved: bool  # the node existed only as a relationship's endpoint until now
    superseded: list[Superseded] | None = Field(default=None, exclude_if=unset)
    # valid time, as the writer stated it (unset: from the event's time, still true)
    valid_from: str | None = Field(default=None, exclude_if=unset)
    valid_to: str | None = Field(default=None, exclude_if=unset)
    # entity resolution: the node's blocking keys now (the read model indexes them), and
    # the identity the writer named when the write was resolved onto this existing node
    resolution_keys: list[str] | None = Field(default=None, exclude_if=unset)
    resolved_from: str | None = Field(default=None, exclude_if=unset)
    written_by: str | None = Field(default=None, exclude_if=unset)  # see ``writer_of``
    # properties written that the schema does not declare (the label allows them)
    unknown_properties: list[str] | None = Field(default=None, exclude_if=unset)
    # the node's scope (``language.scopes``), set when its label declares one; unset: the
    # scope the node has, or the implicit one for a new node
    scope: str | None = Field(default=None, exclude_if=unset)
    # the scope a write that moved the node took it from (its label allows several)
    moved_from: str | None = Field(default=None, exclude_if=unset)
    # the label's properties kept out of the text index (``language.indexing``), set when
    # it has any; unset: the node keeps those its row lists (a new one: none)
    unsearchable: list[str] | None = Field(default=None, exclude_if=unset)

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
    superseded: list[Superseded] | None = Field(default=None, exclude_if=unset)
    valid_from: str | None = Field(default=None, exclude_if=unset)
    valid_to: str | None = Field(default=None, exclude_if=unset)
    # entity resolution of the endpoints it would create: each stub's blocking keys (by
    # identity; the read model indexes them), and the identity the writer named for an
    # end ("from"/"to") that resolved onto an existing node
    stub_keys: dict[str, list[str]] | None = Field(default=None, exclude_if=unset)
    resolved_from: dict[str, str] | None = Field(default=None, exclude_if=unset)
    written_by: str | None = Field(default=None, exclude_if=unset)  # see ``writer_of``
    unknown_properties: list[str] | None = Field(default=None, exclude_if=unset)
    # each end's scope by identity, set when an end is outside the implicit scope (a stub
    # this write creates gets its own from here)
    scopes: dict[str, str] | None = Field(default=None, exclude_if=unset)

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
    merged_into: str | None = Field(default=None, exclude_if=unset)  # a merge's survivor

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
    # the relationship of a functional type that replaced this one (it ends, it is not lost)
    superseded_by: str | None = Field(default=None, exclude_if=unset)
    # re-drawn by a merge (``nodes.merged``) as this relationship at the survivor
    moved_to: str | None = Field(default=None, exclude_if=unset)

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
    diff: dict[str, Any] | None = Field(default=None, exclude_if=unset)

    @property
    def subject(self) -> str:
        return self.version


class WriteProposed(Payload):
    """A write held for review: the operation and its arguments exactly as sent, with the
    event's provenance computed as for any write. It changes no graph until a reviewer
    approves it (then the write is appended as if sent then, under that day's checks)."""

    event_type: ClassVar[str] = "write.proposed"

    proposal: str  # its id: the stream ``proposal:<id>`` holds it and its decision
    operation: str
    arguments: dict[str, Any]
    target: str  # the node or relationship it would write
    reason: str  # why it was held (a confidence floor, a conflict under ``review``)
    batch_item: int | None = Field(default=None, exclude_if=unset)

    @property
    def stream(self) -> str:
        return proposal_stream(self.proposal)

    @property
    def subject(self) -> str:
        return self.target


class ProposalDecided(Payload):
    """A reviewer's decision on a proposal; an approval is appended with the write itself."""

    event_type: ClassVar[str] = "proposal.decided"

    proposal: str
    decision: Literal["approved", "rejected"]
    reviewer: str  # the reviewing agent: the event's actor (an older approval's was the writer)
    note: str = ""
    # the proposal's writer, whose approved write stays theirs (absent from decisions
    # recorded before they were the reviewer's events: then the actor of an approval)
    writer: str | None = Field(default=None, exclude_if=unset)

    @property
    def stream(self) -> str:
        return proposal_stream(self.proposal)

    @property
    def subject(self) -> str:
        return self.proposal


def writer_of(event: EventCore, payload: Payload) -> str:
    """Who wrote what ``event`` holds: its actor, unless the event carries another agent's
    write on (``written_by``: a merge re-drawing a relationship, an unmerge putting values
    back). The actor is who did the event; this is whose claim the value is."""
    if isinstance(payload, NodeWritten | RelationshipWritten) and payload.written_by:
        return payload.written_by
    return event.actor.agent


def proposal_stream(proposal: str) -> str:
    return f"proposal:{proposal}"


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
ALL_PAYLOADS: tuple[type[Payload], ...] = (
    *GRAPH_PAYLOADS,
    SchemaPublished,
    WriteProposed,
    ProposalDecided,
    NodesMerged,
    NodesUnmerged,
    NodesIndexed,
    LabelSearchable,
    ObservationRecorded,
    FeedbackGiven,
    NodeCorroborated,
    RelationshipCorroborated,
    SourceRetracted,
    SourceUnretracted,
)
PAYLOADS: dict[str, type[Payload]] = {model.event_type: model for model in ALL_PAYLOADS}
EVENT_TYPES: tuple[str, ...] = tuple(PAYLOADS)
GRAPH_EVENT_TYPES: tuple[str, ...] = tuple(model.event_type for model in GRAPH_PAYLOADS)


# -- writing ---------------------------------------------------------------------------


def draft(
    payload: Payload,
    streams: Sequence[str],
    *,
    provenance: WriteProvenance | None = None,
    request: dict[str, Any] | None = None,
    expected: Mapping[str, int] | None = None,
    actor: Actor | None = None,
) -> DraftEvent:
    """The event the log will append for ``payload`` (it adds seq, time and hashes, and the
    transaction's actor unless ``actor`` names who did this one)."""
    stored = payload.stored()
    _drafted.last = (stored, payload)
    return DraftEvent(
        type=payload.event_type,
        payload=stored,
        streams=tuple(streams),
        provenance=provenance.stored() if provenance is not None else None,
        request=request,
        expected_versions=dict(expected or {}),
        actor=actor,
    )


# -- reading ---------------------------------------------------------------------------


def payload_of(event: EventCore) -> Payload:
    """The typed payload of a stored event (``UnknownPayload`` for a type this version lacks).
    The event this thread drafted last is answered with the payload it was drafted from: its
    transaction's inline projections read it the moment it is emitted, and a retraction's
    batch, thousands of nested images, took a third of the batch's time to read again."""
    last: tuple[dict[str, Any], Payload] | None = getattr(_drafted, "last", None)
    if last is not None and last[0] is event.payload:
        return last[1]
    model = PAYLOADS.get(event.type)
    if model is None:
        return UnknownPayload.model_validate(event.payload)
    payload: Payload = _reader(model)(event.payload)
    return payload


def provenance_of(event: EventCore) -> WriteProvenance | None:
    """The provenance of a write (``None`` for events that record none, like a schema)."""
    if event.provenance is None:
        return None
    return WriteProvenance.read(event.provenance)


_drafted = local()  # ``last``: (the stored form, the payload) of this thread's last draft
Reader = Callable[[Mapping[str, Any]], Any]
_REQUIRED = object()


@cache
def _reader(model: type[BaseModel]) -> Reader:
    """A function building ``model`` from its stored form without validating it: fields are
    copied, or built as the nested model (or list of them) the annotation names."""
    plain: list[tuple[str, str, Any]] = []
    nested: list[tuple[str, str, Reader]] = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        build = _nested(info.annotation)
        if build is not None:
            nested.append((name, key, build))
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


def _nested(annotation: Any) -> Reader | None:
    """The reader of a model field (``M``, ``list[M]``, either ``| None``), else None."""
    args = get_args(annotation)
    if get_origin(annotation) in (Union, UnionType) and NoneType in args:
        inner = [arg for arg in args if arg is not NoneType]
        return _nested(inner[0]) if len(inner) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _reader(annotation)
    if get_origin(annotation) is list and len(args) == 1:
        item = _nested(args[0])
        if item is not None:
            return _each(item)
    return None


def _each(item: Reader) -> Callable[[Any], list[Any]]:
    return lambda values: [item(v) for v in values]
