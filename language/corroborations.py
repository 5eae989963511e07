"""Corroboration: the same fact said again by someone, something or some way not yet heard.

A write that would change nothing appends nothing — unless its provenance brings an agent,
source or extraction method not yet recorded as supporting the fact. "The fact" is the
node's (or relationship's) current version as a whole: its properties and valid time.
Such a write is recorded as ``node.corroborated`` / ``relationship.corroborated``: the
corroborating write's provenance is the event's, and the event makes no new version (its
stream is the fact's own ``corroboration:`` stream, so the node's stream version, which
``if_version`` and the read model's ``version`` follow, does not move).

The confidence the fact reaches is computed by the formula provider's rule when the
corroboration lands (``gate.formula.corroborated``) and travels in the event, as
feedback's rate does: a replay reproduces it whatever the provider is by then.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from writegate.language.base import GraphPayload, unset
from writegate.language.identities import NodeRef, node_stream, relationship_stream


def corroboration_stream(stream: str) -> str:
    """The stream of a fact's corroborations, beside its own (``node:…`` / ``rel:…``)."""
    return "corroboration:" + stream


def said_of(stream: str) -> list[str]:
    """A fact's stream and its corroborations': every event saying something of it."""
    return [stream, corroboration_stream(stream)]


class NodeCorroborated(GraphPayload):
    """A node's current version said again from a new agent, source or method."""

    event_type: ClassVar[str] = "node.corroborated"

    node: NodeRef
    version: int  # the version it supports (its own stream's, unmoved by this event)
    written_seq: int  # the event that wrote that version
    # the fact's confidence with this support, by the formula provider's rule, and the
    # distinct sources supporting it now (independence for the confidence: by source)
    corroborated_confidence: float
    sources: list[str]
    scope: str | None = Field(default=None, exclude_if=unset)  # the node's, as NodeWritten's
    # the identity the writer named, when the write landed on this node (entity resolution)
    resolved_from: str | None = Field(default=None, exclude_if=unset)

    @property
    def stream(self) -> str:
        return corroboration_stream(node_stream(self.node.identity))

    @property
    def subject(self) -> str:
        return self.node.identity


class RelationshipCorroborated(GraphPayload):
    """A relationship's current version said again from a new agent, source or method."""

    event_type: ClassVar[str] = "relationship.corroborated"

    identity: str
    type: str
    from_identity: str = Field(alias="from")
    to_identity: str = Field(alias="to")
    version: int
    written_seq: int
    corroborated_confidence: float
    sources: list[str]
    # each end's scope by identity, set when an end is outside the implicit scope
    scopes: dict[str, str] | None = Field(default=None, exclude_if=unset)
    # the identity the writer named for an end ("from"/"to") that landed on another node
    resolved_from: dict[str, str] | None = Field(default=None, exclude_if=unset)

    @property
    def stream(self) -> str:
        return corroboration_stream(relationship_stream(self.identity))

    @property
    def subject(self) -> str:
        return self.identity


Corroborated = NodeCorroborated | RelationshipCorroborated
