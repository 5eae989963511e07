"""Merging duplicate nodes, and undoing it: the two events that frame each step.

A merge is appended as the graph events any write could make — the duplicate's
relationships ended and re-drawn at the survivor, the survivor's properties written, the
duplicate deleted — closed by ``nodes.merged``, which records everything the merge
changed as it was (the before-image): so projections need nothing new, the duplicate's
identity becomes an alias later writes resolve to, and ``nodes.unmerged`` can put every
value, relationship and "who set it" back. Nothing is lost either way.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from writegate.language.base import MODEL, Payload, WriteProvenance, unset
from writegate.language.identities import NodeRef


def merge_stream(merge: str) -> str:
    return f"merge:{merge}"


class FactRecord(BaseModel):
    """Who set one value the graph holds (a ``state_facts`` row), kept so a merge can
    carry it and an unmerge restore it: the value keeps its writer, not the merger."""

    model_config = MODEL

    identity: str  # the node's or relationship's
    property: str
    seq: int
    agent: str
    provenance: dict[str, Any] | None  # the setting write's provenance, as stored


class MovedRelationship(BaseModel):
    """One relationship of the duplicate, re-drawn at the survivor."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    identity: str  # as it was
    type: str
    from_identity: str = Field(alias="from")
    to_identity: str = Field(alias="to")
    properties: dict[str, Any]  # as it was
    provenance: WriteProvenance | None  # its last write's: the re-drawn one keeps it
    moved_to: str  # the identity it has now
    created: bool  # False: the survivor had this relationship already, and it absorbed it
    # on a relationship the survivor had: the values the merge changed, as they were
    # (None: absent), and the values it set
    replaced: dict[str, JsonValue] = Field(default_factory=dict)
    set: dict[str, JsonValue] = Field(default_factory=dict)
    target_provenance: WriteProvenance | None = None  # that one's last write's, before
    # who made those last writes (absent from merges recorded before they were kept)
    agent: str | None = Field(default=None, exclude_if=unset)
    target_agent: str | None = Field(default=None, exclude_if=unset)


class NodesMerged(Payload):
    """The duplicate (``merged``) is now the survivor: its identity an alias of it."""

    event_type: ClassVar[str] = "nodes.merged"

    merge: str  # its id: the stream ``merge:<id>`` holds it and its undoing
    survivor: NodeRef
    merged: NodeRef
    reason: str
    properties: dict[str, Any]  # the duplicate's, as they were (merge keys included)
    # the last writes' provenance, before: what an unmerge stamps the restored facts with
    merged_provenance: WriteProvenance | None
    survivor_provenance: WriteProvenance | None
    replaced: dict[str, JsonValue]  # the survivor's values the merge changed (None: absent)
    set: dict[str, JsonValue]  # the values the merge gave the survivor
    relationships: list[MovedRelationship]
    aliases: list[str]  # identities that resolved to the duplicate, now to the survivor
    resolution_keys: list[str] | None  # the duplicate's blocking keys, as indexed
    facts: list[FactRecord]  # who set what, before: what an unmerge restores
    carried: list[FactRecord]  # who set the values the survivor and its relationships took
    # who made those last writes: an unmerge gives the restored node back as theirs
    # (absent from merges recorded before they were kept)
    merged_agent: str | None = Field(default=None, exclude_if=unset)
    survivor_agent: str | None = Field(default=None, exclude_if=unset)

    @property
    def stream(self) -> str:
        return merge_stream(self.merge)

    @property
    def subject(self) -> str:
        return self.survivor.identity


class NodesUnmerged(Payload):
    """A merge undone: the duplicate is back, with its values, relationships and writers."""

    event_type: ClassVar[str] = "nodes.unmerged"

    merge: str
    survivor: str
    restored: NodeRef
    reason: str
    aliases: list[str]  # identities that resolve to the restored node again
    facts: list[FactRecord]  # who set what, as before the merge
    kept: list[str] = Field(default_factory=list)  # survivor values written since: left as is

    @property
    def stream(self) -> str:
        return merge_stream(self.merge)

    @property
    def subject(self) -> str:
        return self.restored.identity
