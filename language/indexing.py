"""Nodes indexed anew by a schema change, not by a write of their own: for entity
resolution (``nodes.indexed``) and for text search (``label.searchable``).

A node's blocking keys travel in the ``node.written`` event that writes it, while its label
resolves. Nodes written before their label resolved — or before it changed what a name is
read from — have none, or stale ones, and no later write would meet them. So the publish
that switches resolution on (or re-keys it) indexes the label's live nodes in
``nodes.indexed`` events of their own, a batch of nodes each, in the publish's transaction:
the index stays exact, and a replay rebuilds it from the log alone. Indexing writes no
node: no node's version moves.

The text index leaves out the properties a label's schema marks ``searchable: false``. A
node's row lists them (from the ``node.written`` event that wrote it), so any event that
makes its document again leaves them out; the publish that changes which they are says so
in one ``label.searchable`` event, and the read model makes the label's documents again.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from writegate.language.base import MODEL, Payload
from writegate.language.identities import NodeRef


def resolution_stream(label: str) -> str:
    """The stream a label's indexing events are appended to."""
    return f"resolution:{label}"


class IndexedNode(BaseModel):
    """One node and the keys it is indexed under now (a personal node's sealed with its
    subject; None once that subject is forgotten)."""

    model_config = MODEL

    node: NodeRef
    resolution_keys: list[str] | None


class NodesIndexed(Payload):
    event_type: ClassVar[str] = "nodes.indexed"

    label: str
    schema_version: str  # the published schema that asked for it
    nodes: list[IndexedNode]


def search_stream(label: str) -> str:
    """The stream a label's ``label.searchable`` events are appended to."""
    return f"search:{label}"


class LabelSearchable(Payload):
    event_type: ClassVar[str] = "label.searchable"

    label: str
    schema_version: str  # the published schema that changed them
    unsearchable: list[str]  # its properties kept out of the text index from now on
