"""Names in the graph: the identifier pattern, node and relationship identities, streams.

Identity strings are computed once, when the gate accepts a write, and carried in
payloads, so no reader re-derives them: a node is ``Label{canonical keys}``, a
relationship ``(from)-[TYPE]->(to)``; the log versions each as a stream (``node:…``,
``rel:…``) without knowing what it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict

from writegate.eventlog import canonical_json

# Labels, relationship types and property names: letters, digits and underscores, starting
# with a letter or underscore. The gate admits nothing else, and stores check again.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def is_identifier(name: object) -> bool:
    return isinstance(name, str) and IDENTIFIER.fullmatch(name) is not None


def node_identity(label: str, keys: Mapping[str, Any]) -> str:
    return label + canonical_json(dict(keys)).decode()


def parse_node_identity(identity: str) -> tuple[str, dict[str, Any]]:
    """Inverse of ``node_identity``: labels are identifiers, so the first "{" starts the keys."""
    label, brace, keys = identity.partition("{")
    return label, orjson.loads(brace + keys)


def relationship_identity(rtype: str, from_identity: str, to_identity: str) -> str:
    return f"({from_identity})-[{rtype}]->({to_identity})"


def node_stream(identity: str) -> str:
    return "node:" + identity


def relationship_stream(identity: str) -> str:
    return "rel:" + identity


class NodeRef(BaseModel):
    """How payloads name a node: identity, canonical label, keys, and the remap breadcrumb
    (``":person"`` when the writer said ``person`` and the schema made it ``Person``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    identity: str
    label: str
    keys: dict[str, Any]
    remapped_from: str | None = None

    @classmethod
    def of(cls, label: str, keys: Mapping[str, Any], remapped_from: str | None = None) -> NodeRef:
        return cls(
            identity=node_identity(label, keys),
            label=label,
            keys=dict(keys),
            remapped_from=remapped_from,
        )

    @classmethod
    def parse(cls, identity: str) -> NodeRef:
        """The reference an identity string names (no breadcrumb: identities carry none)."""
        label, keys = parse_node_identity(identity)
        return cls(identity=identity, label=label, keys=keys)

    @property
    def stream(self) -> str:
        return node_stream(self.identity)
