"""Names in the graph: the identifier pattern, node and relationship identities, streams.

Identity strings are computed once, when the gate accepts a write, and carried in
payloads, so no reader re-derives them: a node is ``Label{canonical keys}``, a
relationship ``(from)-[TYPE]->(to)``; the log versions each as a stream (``node:…``,
``rel:…``) without knowing what it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict

from writegate.eventlog import canonical_json

# Labels, relationship types and property names: letters, digits and underscores, starting
# with a letter or underscore. The gate admits nothing else, and stores check again.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def is_identifier(name: object) -> bool:
    return isinstance(name, str) and IDENTIFIER.fullmatch(name) is not None


# (label, clear identity) -> the pseudonym of a personal label's node, or None: a node whose
# label is personal is named ``Label~<subject id>`` wherever an identity is computed from
# its keys, so no identity, stream or relationship holds its clear merge keys
Pseudonyms = Callable[[str, str], str | None]
_PSEUDONYMS: ContextVar[Pseudonyms | None] = ContextVar("pseudonyms", default=None)
PSEUDONYM = "~"  # between a personal node's label and its subject id


@contextmanager
def pseudonymous(resolve: Pseudonyms | None) -> Iterator[None]:
    """Identities computed inside name personal nodes as ``resolve`` says (``gate.personal``)."""
    token = _PSEUDONYMS.set(resolve)
    try:
        yield
    finally:
        _PSEUDONYMS.reset(token)


def clear_identity(label: str, keys: Mapping[str, Any]) -> str:
    """A node's identity from its keys, never a pseudonym: a personal node's subject locator."""
    return label + canonical_json(dict(keys)).decode()


def node_identity(label: str, keys: Mapping[str, Any]) -> str:
    clear = label + canonical_json(dict(keys)).decode()
    resolve = _PSEUDONYMS.get()
    if resolve is None:
        return clear
    return resolve(label, clear) or clear


def parse_node_identity(identity: str) -> tuple[str, dict[str, Any]]:
    """Inverse of ``node_identity``: labels are identifiers, so the first "{" starts the keys
    (a pseudonym, ``Label~<subject id>``, names no keys)."""
    label, brace, keys = identity.partition("{")
    if not brace and PSEUDONYM in label:
        return label.partition(PSEUDONYM)[0], {}
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
