"""Events to parameterised Cypher, batched: seed 000's emitted statements, ``UNWIND``-ed.

Consecutive events that need the same statement (same kind, label or type, key names) are
one ``UNWIND $rows`` call. Labels, relationship types and property names reach the text
only after passing the identifier check and inside backticks; every value is a parameter.
A node's scope (``language.scopes``) is a label too, `` `scope:<name>` `` (no schema label
can hold a colon), so a graph store's own label-based access control can keep to it. A
corroborated node or relationship carries ``_supported_by`` (its distinct sources) and
``_corroborated_confidence``; a new version clears both (it has only its writer's support).
A personal label's node (named by a pseudonym, ``Label~<subject id>``) is found by
``_pseudonym`` rather than by its keys, which it carries as properties: once its subject is
forgotten its keys read ``null``, and the node must still be found (``projections.forgotten``
takes the values out; a rebuild then sets them ``null``, which removes them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from writegate.eventlog import EventCore
from writegate.eventlog.events import format_timestamp
from writegate.language import (
    DEFAULT_SCOPE,
    PSEUDONYM,
    GraphPayload,
    NodeCorroborated,
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipCorroborated,
    RelationshipDeleted,
    RelationshipWritten,
    is_identifier,
    payload_of,
    provenance_of,
)

CHECKPOINT_LABEL = "_WritegateCheckpoint"
PSEUDONYM_KEY = "_pseudonym"  # what a personal node is found by in the graph
REGISTRY_LABELS = ("Schema", "SchemaRelationship")  # seed 000's graph-backed registry


class UnsafeIdentifier(ValueError):
    """A label, type or key that is not an identifier reached the projection (never expected:
    the gate only appends validated names)."""


def quoted(name: str) -> str:
    if not is_identifier(name):
        raise UnsafeIdentifier(f"{name!r} is not an identifier")
    return f"`{name}`"


def scope_label(scope: str) -> str:
    """The label a node in ``scope`` carries in the graph (``scope:`` and an identifier)."""
    return f"`scope:{quoted(scope)[1:-1]}`"


def scoped(variable: str, scope: str | None) -> str:
    """The ``SET`` item giving a node its scope's label (none while the scope is unset or
    the implicit one)."""
    return f", {variable}:{scope_label(scope)}" if scope not in (None, DEFAULT_SCOPE) else ""


def _unscoped(variable: str, moved_from: str | None) -> str:
    """The ``REMOVE`` of the scope label a node that moved left (nothing: it did not)."""
    return f" REMOVE {variable}:{scope_label(moved_from)}" if moved_from is not None else ""


def pseudonymous(identity: str) -> bool:
    """Whether ``identity`` is a personal node's pseudonym (``Label~<subject id>``, no keys)."""
    label, brace, _ = identity.partition("{")
    return not brace and PSEUDONYM in label


def found_by(ref: NodeRef) -> dict[str, Any]:
    """The properties a node is found by in the graph: its keys, or its pseudonym."""
    return {PSEUDONYM_KEY: ref.identity} if pseudonymous(ref.identity) else dict(ref.keys)


def _named(variable: str, ref: NodeRef, source: str) -> str:
    """The ``SET`` item putting a personal node's keys on it (nothing for another node)."""
    return f", {variable} += {source}" if pseudonymous(ref.identity) else ""


def pattern(variable: str, label: str, keys: Sequence[str], source: str) -> str:
    fields = ", ".join(f"{quoted(k)}: {source}.{quoted(k)}" for k in keys)
    return f"({variable}:{quoted(label)} {{{fields}}})"


_STAMP = (
    "{v}.confidence = r.confidence, {v}.source = r.source, "
    "{v}.extraction_method = r.extraction_method, {v}.write_gate_version = r.write_gate_version, "
    "{v}.last_updated = datetime(r.at), "
    "{v}._supported_by = null, {v}._corroborated_confidence = null"
)


def stamp(variable: str) -> str:
    return _STAMP.format(v=variable)


@dataclass
class Statement:
    cypher: str
    rows: list[dict[str, Any]] = field(default_factory=list)


def _common(event: EventCore) -> dict[str, Any]:
    provenance = provenance_of(event)
    return {
        "confidence": provenance.confidence if provenance else None,
        "source": provenance.source if provenance else None,
        "extraction_method": provenance.extraction_method if provenance else None,
        "write_gate_version": provenance.write_gate_version if provenance else None,
        "at": format_timestamp(event.occurred_at),
    }


Built = tuple[tuple[Any, ...], str, dict[str, Any]]  # (grouping key, cypher, row)


def _node_written(event: EventCore, written: NodeWritten) -> Built:
    node = written.node
    keys = sorted(found_by(node))
    cypher = (
        f"UNWIND $rows AS r MERGE {pattern('n', node.label, keys, 'r.keys')} "
        f"SET n += r.props{_named('n', node, 'r.named')}, {stamp('n')}, "
        f"n._stub = null{scoped('n', written.scope)}, "
        "n._schema_remap_from = coalesce(r.remap, n._schema_remap_from), "
        "n._resolved_from = coalesce(r.resolved, n._resolved_from)"
        f"{_unscoped('n', written.moved_from)}"
    )
    row = {
        **_common(event),
        "keys": found_by(node),
        "props": written.properties,
        "remap": node.remapped_from,
        "resolved": written.resolved_from,  # the identity the writer named (entity resolution)
        **({"named": node.keys} if pseudonymous(node.identity) else {}),
    }
    return ("node", node.label, tuple(keys), written.scope, written.moved_from), cypher, row


def _relationship_written(event: EventCore, written: RelationshipWritten) -> Built:
    start, end = written.from_node, written.to_node
    start_keys, end_keys = sorted(found_by(start)), sorted(found_by(end))
    ends = written.scopes or {}
    start_scope, end_scope = ends.get(start.identity), ends.get(end.identity)
    key = (
        "rel",
        written.type,
        start.label,
        tuple(start_keys),
        start_scope,
        end.label,
        tuple(end_keys),
        end_scope,
    )
    cypher = (
        f"UNWIND $rows AS r "
        f"MERGE {pattern('a', start.label, start_keys, 'r.from')} "
        f"ON CREATE SET a._stub = true, {stamp('a')}{scoped('a', start_scope)}"
        f"{_named('a', start, 'r.from_named')} "
        f"MERGE {pattern('b', end.label, end_keys, 'r.to')} "
        f"ON CREATE SET b._stub = true, {stamp('b')}{scoped('b', end_scope)}"
        f"{_named('b', end, 'r.to_named')} "
        f"MERGE (a)-[x:{quoted(written.type)}]->(b) "
        f"SET x += r.props, {stamp('x')}, "
        "x._schema_remap_from = coalesce(r.remap, x._schema_remap_from), "
        # as stated; a write stating none keeps what the relationship had (as SET += does)
        "x.valid_from = coalesce(r.valid_from, x.valid_from), "
        "x.valid_to = coalesce(r.valid_to, x.valid_to)"
    )
    row = {
        **_common(event),
        "from": found_by(start),
        "to": found_by(end),
        "props": written.properties,
        "remap": written.remapped_from,
        "valid_from": written.valid_from,
        "valid_to": written.valid_to,
        **({"from_named": start.keys} if pseudonymous(start.identity) else {}),
        **({"to_named": end.keys} if pseudonymous(end.identity) else {}),
    }
    return key, cypher, row


def _node_deleted(deleted: NodeDeleted) -> Built:
    node = deleted.node
    keys = sorted(found_by(node))
    match = pattern("n", node.label, keys, "r.keys")
    cypher = f"UNWIND $rows AS r MATCH {match} DETACH DELETE n"
    return ("delnode", node.label, tuple(keys)), cypher, {"keys": found_by(node)}


def _relationship_deleted(deleted: RelationshipDeleted) -> Built:
    start, end = NodeRef.parse(deleted.from_identity), NodeRef.parse(deleted.to_identity)
    start_keys, end_keys = sorted(found_by(start)), sorted(found_by(end))
    key = ("delrel", deleted.type, start.label, tuple(start_keys), end.label, tuple(end_keys))
    cypher = (
        f"UNWIND $rows AS r MATCH {pattern('a', start.label, start_keys, 'r.from')}"
        f"-[x:{quoted(deleted.type)}]->{pattern('b', end.label, end_keys, 'r.to')} DELETE x"
    )
    return key, cypher, {"from": found_by(start), "to": found_by(end)}


_HEARD = "SET {v}._supported_by = r.sources, {v}._corroborated_confidence = r.confidence"


def _node_corroborated(heard: NodeCorroborated) -> Built:
    node = heard.node
    keys = sorted(found_by(node))
    match = pattern("n", node.label, keys, "r.keys")
    cypher = f"UNWIND $rows AS r MATCH {match} {_HEARD.format(v='n')}"
    row = {
        "keys": found_by(node),
        "sources": heard.sources,
        "confidence": heard.corroborated_confidence,
    }
    return ("heardnode", node.label, tuple(keys)), cypher, row


def _relationship_corroborated(heard: RelationshipCorroborated) -> Built:
    start, end = NodeRef.parse(heard.from_identity), NodeRef.parse(heard.to_identity)
    start_keys, end_keys = sorted(found_by(start)), sorted(found_by(end))
    key = ("heardrel", heard.type, start.label, tuple(start_keys), end.label, tuple(end_keys))
    cypher = (
        f"UNWIND $rows AS r MATCH {pattern('a', start.label, start_keys, 'r.from')}"
        f"-[x:{quoted(heard.type)}]->{pattern('b', end.label, end_keys, 'r.to')} "
        f"{_HEARD.format(v='x')}"
    )
    row = {
        "from": found_by(start),
        "to": found_by(end),
        "sources": heard.sources,
        "confidence": heard.corroborated_confidence,
    }
    return key, cypher, row


def _build(event: EventCore, payload: GraphPayload) -> Built:
    match payload:
        case NodeCorroborated():
            return _node_corroborated(payload)
        case RelationshipCorroborated():
            return _relationship_corroborated(payload)
        case NodeWritten():
            return _node_written(event, payload)
        case RelationshipWritten():
            return _relationship_written(event, payload)
        case NodeDeleted():
            return _node_deleted(payload)
        case RelationshipDeleted():
            return _relationship_deleted(payload)
    raise TypeError(f"no Cypher for {type(payload).__name__}")


Graphed = tuple[EventCore, GraphPayload]


def statements(events: Sequence[EventCore]) -> Iterator[Statement]:
    """The batch as few statements as possible, with the same effect as event order.

    Between two deletions, all node writes go first (one statement per label and key set,
    rows in event order), then all relationship writes. That reordering changes nothing:
    a node write and a relationship write commute except that a relationship may create an
    endpoint as a stub, and a later (or, reordered, earlier) write of that node clears the
    stub flag and stamps it either way. Runs of deletions are grouped the same way (a
    relationship deleted before or after its endpoint's detaching delete is gone either
    way); writes never cross a deletion, nor a corroboration.
    """
    segment: list[Graphed] = []
    kind = "write"
    for event in events:
        payload = payload_of(event)
        if not isinstance(payload, GraphPayload):
            continue  # schema events: nothing to project into the graph
        if _kind(payload) != kind:
            yield from _grouped(segment)
            segment, kind = [], _kind(payload)
        segment.append((event, payload))
    yield from _grouped(segment)


def _kind(payload: GraphPayload) -> str:
    """Writes, deletions and corroborations each group with their own kind only (a
    corroboration supports the version written before it, never one written after)."""
    if isinstance(payload, NodeWritten | RelationshipWritten):
        return "write"
    if isinstance(payload, NodeCorroborated | RelationshipCorroborated):
        return "heard"
    return "delete"


def _grouped(events: Sequence[Graphed]) -> Iterator[Statement]:
    groups: dict[tuple[Any, ...], Statement] = {}
    ordered = [e for e in events if isinstance(e[1], NodeWritten)]
    ordered += [e for e in events if not isinstance(e[1], NodeWritten)]
    for event, payload in ordered:
        key, cypher, row = _build(event, payload)
        groups.setdefault(key, Statement(cypher)).rows.append(row)
    yield from groups.values()


def merge_key_indexes(events: Sequence[EventCore]) -> set[tuple[str, str]]:
    """(label, key) pairs the batch merges on: each deserves an index."""
    wanted: set[tuple[str, str]] = set()
    for event in events:
        match payload_of(event):
            case NodeWritten(node=node):
                refs = [node]
            case RelationshipWritten(from_node=start, to_node=end):
                refs = [start, end]
            case _:
                continue
        wanted |= {(ref.label, k) for ref in refs for k in found_by(ref)}
    return wanted
