"""Events to parameterised Cypher, batched: seed 000's emitted statements, ``UNWIND``-ed.

Consecutive events that need the same statement (same kind, label or type, key names) are
one ``UNWIND $rows`` call. Labels, relationship types and property names reach the text
only after passing the identifier check and inside backticks; every value is a parameter.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from writegate.eventlog import EventCore
from writegate.eventlog.events import format_timestamp
from writegate.projections.vocabulary import (
    NODE_DELETED,
    NODE_WRITTEN,
    RELATIONSHIP_DELETED,
    RELATIONSHIP_WRITTEN,
    is_identifier,
    parse_node_identity,
)

CHECKPOINT_LABEL = "_WritegateCheckpoint"
REGISTRY_LABELS = ("Schema", "SchemaRelationship")  # seed 000's graph-backed registry


class UnsafeIdentifier(ValueError):
    """A label, type or key that is not an identifier reached the projection (never expected:
    the gate only appends validated names)."""


def quoted(name: str) -> str:
    if not is_identifier(name):
        raise UnsafeIdentifier(f"{name!r} is not an identifier")
    return f"`{name}`"


def _pattern(variable: str, label: str, keys: Sequence[str], source: str) -> str:
    fields = ", ".join(f"{quoted(k)}: {source}.{quoted(k)}" for k in keys)
    return f"({variable}:{quoted(label)} {{{fields}}})"


_STAMP = (
    "{v}.confidence = r.confidence, {v}.source = r.source, "
    "{v}.extraction_method = r.extraction_method, {v}.write_gate_version = r.write_gate_version, "
    "{v}.last_updated = datetime(r.at)"
)


def _stamp(variable: str) -> str:
    return _STAMP.format(v=variable)


@dataclass
class Statement:
    cypher: str
    rows: list[dict[str, Any]] = field(default_factory=list)


def _common(event: EventCore) -> dict[str, Any]:
    provenance = event.provenance or {}
    return {
        "confidence": provenance.get("confidence"),
        "source": provenance.get("source"),
        "extraction_method": provenance.get("extraction_method"),
        "write_gate_version": provenance.get("write_gate_version"),
        "at": format_timestamp(event.occurred_at),
    }


def _node_written(event: EventCore) -> tuple[tuple[Any, ...], str, dict[str, Any]]:
    node = event.payload["node"]
    keys = sorted(node["keys"])
    key = ("node", node["label"], tuple(keys))
    cypher = (
        f"UNWIND $rows AS r MERGE {_pattern('n', node['label'], keys, 'r.keys')} "
        f"SET n += r.props, {_stamp('n')}, n._stub = null, "
        "n._schema_remap_from = coalesce(r.remap, n._schema_remap_from)"
    )
    row = {
        **_common(event),
        "keys": node["keys"],
        "props": event.payload["properties"],
        "remap": node.get("remapped_from"),
    }
    return key, cypher, row


def _relationship_written(event: EventCore) -> tuple[tuple[Any, ...], str, dict[str, Any]]:
    payload = event.payload
    start, end = payload["from"], payload["to"]
    start_keys, end_keys = sorted(start["keys"]), sorted(end["keys"])
    key = ("rel", payload["type"], start["label"], tuple(start_keys), end["label"], tuple(end_keys))
    cypher = (
        f"UNWIND $rows AS r "
        f"MERGE {_pattern('a', start['label'], start_keys, 'r.from')} "
        f"ON CREATE SET a._stub = true, {_stamp('a')} "
        f"MERGE {_pattern('b', end['label'], end_keys, 'r.to')} "
        f"ON CREATE SET b._stub = true, {_stamp('b')} "
        f"MERGE (a)-[x:{quoted(payload['type'])}]->(b) "
        f"SET x += r.props, {_stamp('x')}, "
        "x._schema_remap_from = coalesce(r.remap, x._schema_remap_from)"
    )
    row = {
        **_common(event),
        "from": start["keys"],
        "to": end["keys"],
        "props": payload["properties"],
        "remap": payload.get("remapped_from"),
    }
    return key, cypher, row


def _node_deleted(event: EventCore) -> tuple[tuple[Any, ...], str, dict[str, Any]]:
    node = event.payload["node"]
    keys = sorted(node["keys"])
    match = _pattern("n", node["label"], keys, "r.keys")
    cypher = f"UNWIND $rows AS r MATCH {match} DETACH DELETE n"
    return ("delnode", node["label"], tuple(keys)), cypher, {"keys": node["keys"]}


def _relationship_deleted(event: EventCore) -> tuple[tuple[Any, ...], str, dict[str, Any]]:
    payload = event.payload
    start_label, start = parse_node_identity(payload["from"])
    end_label, end = parse_node_identity(payload["to"])
    start_keys, end_keys = sorted(start), sorted(end)
    key = ("delrel", payload["type"], start_label, tuple(start_keys), end_label, tuple(end_keys))
    cypher = (
        f"UNWIND $rows AS r MATCH {_pattern('a', start_label, start_keys, 'r.from')}"
        f"-[x:{quoted(payload['type'])}]->{_pattern('b', end_label, end_keys, 'r.to')} DELETE x"
    )
    return key, cypher, {"from": start, "to": end}


_BUILDERS = {
    NODE_WRITTEN: _node_written,
    RELATIONSHIP_WRITTEN: _relationship_written,
    NODE_DELETED: _node_deleted,
    RELATIONSHIP_DELETED: _relationship_deleted,
}


_WRITES = (NODE_WRITTEN, RELATIONSHIP_WRITTEN)


def statements(events: Sequence[EventCore]) -> Iterator[Statement]:
    """The batch as few statements as possible, with the same effect as event order.

    Between two deletions, all node writes go first (one statement per label and key set,
    rows in event order), then all relationship writes. That reordering changes nothing:
    a node write and a relationship write commute except that a relationship may create an
    endpoint as a stub, and a later (or, reordered, earlier) write of that node clears the
    stub flag and stamps it either way. Runs of deletions are grouped the same way (a
    relationship deleted before or after its endpoint's detaching delete is gone either
    way); writes never cross a deletion.
    """
    segment: list[EventCore] = []
    writing = True
    for event in events:
        if event.type not in _BUILDERS:
            continue  # schema events: nothing to project into the graph
        if (event.type in _WRITES) != writing:
            yield from _grouped(segment)
            segment, writing = [], not writing
        segment.append(event)
    yield from _grouped(segment)


def _grouped(events: Sequence[EventCore]) -> Iterator[Statement]:
    groups: dict[tuple[Any, ...], Statement] = {}
    ordered = [e for e in events if e.type == NODE_WRITTEN]
    ordered += [e for e in events if e.type != NODE_WRITTEN]
    for event in ordered:
        key, cypher, row = _BUILDERS[event.type](event)
        groups.setdefault(key, Statement(cypher)).rows.append(row)
    yield from groups.values()


def merge_key_indexes(events: Sequence[EventCore]) -> set[tuple[str, str]]:
    """(label, key) pairs the batch merges on: each deserves an index."""
    wanted: set[tuple[str, str]] = set()
    for event in events:
        if event.type == NODE_WRITTEN:
            refs = [event.payload["node"]]
        elif event.type == RELATIONSHIP_WRITTEN:
            refs = [event.payload["from"], event.payload["to"]]
        else:
            continue
        wanted |= {(ref["label"], k) for ref in refs for k in ref["keys"]}
    return wanted
