"""The graph events the gate produces and every projection consumes.

Identity strings are computed here once and carried in payloads, so a
projection never re-derives them: a node is ``Label{canonical keys}``, a
relationship is ``(from)-[TYPE]->(to)``; streams prefix them with ``node:`` /
``rel:`` so the log can version and index them without knowing what they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from writegate.eventlog import canonical_json

SCHEMA_PUBLISHED = "schema.published"
NODE_WRITTEN = "node.written"
NODE_DELETED = "node.deleted"
RELATIONSHIP_WRITTEN = "relationship.written"
RELATIONSHIP_DELETED = "relationship.deleted"

GRAPH_EVENT_TYPES = (NODE_WRITTEN, NODE_DELETED, RELATIONSHIP_WRITTEN, RELATIONSHIP_DELETED)

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


def node_ref(
    label: str, keys: Mapping[str, Any], remapped_from: str | None = None
) -> dict[str, Any]:
    """How payloads name a node: identity, canonical label, keys, and the remap breadcrumb."""
    return {
        "identity": node_identity(label, keys),
        "label": label,
        "keys": dict(keys),
        "remapped_from": remapped_from,
    }
