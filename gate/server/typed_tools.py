"""Per-type tools (seed 001): ``add_<label>``, ``update_<label>``, ``delete_<label>``.

Each canonical label of the current snapshot yields three tools whose input schema
is generated from the label's declaration (required properties, types, enums),
with the entity wrapped under the label's lower-cased name as seed 001 does:
``add_person({"person": {...}, "source": ..., "extraction_method": ...})``.

They are conveniences over the same gate, never a second path: each call becomes
one ``write_batch`` (or ``delete_node``), so it is atomic, schema-checked,
policy-guarded and stamped with provenance like any other write. A property whose
declaration carries ``relationship`` also creates an edge to the node it names
(``merge_endpoints``: the target becomes a stub if absent); updating it moves the
edge, as seed 001 §3.4 specifies.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import BatchResult, DeleteNodeResult, Reliability, parse_request
from writegate.gate.schema import LoadedSchema
from writegate.gate.schema.registry import PropertySpec, SchemaEntry
from writegate.gate.server.catalog import ToolCall, ToolSpec
from writegate.language import node_identity, relationship_identity


class _Provenance(BaseModel):
    """The envelope around the entity: what every write must declare."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: StrictStr = Field(min_length=1)
    extraction_method: StrictStr = Field(min_length=1)
    reliability: Reliability = 0.5
    idempotency_key: StrictStr | None = None

    def fields(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "extraction_method": self.extraction_method,
            "reliability": self.reliability,
        }


_ENVELOPE_PROPERTIES: dict[str, Any] = {
    "source": {"type": "string", "description": "Where this came from (URL, file, tool)."},
    "extraction_method": {
        "type": "string",
        "description": "How it was obtained: api, parsed, llm, ... (decides the confidence).",
    },
    "reliability": {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "description": "How reliable the source is, 0 to 1 (default 0.5).",
    },
    "idempotency_key": {
        "type": "string",
        "description": "Retrying with the same key returns the first result and writes nothing.",
    },
}


def _property_schema(spec: PropertySpec | None, name: str) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    if spec is None:
        return {"description": name}
    if spec.type is not None:
        schema["type"] = spec.type
    if spec.type == "array":
        schema["items"] = {"type": spec.items} if spec.items else {}
    if spec.enum is not None:
        if spec.type == "array":
            schema["items"] = {**schema["items"], "enum": list(spec.enum)}
        else:
            schema["enum"] = list(spec.enum)
    description = spec.description
    if spec.relationship is not None:
        rel = spec.relationship
        description = (
            f"{description} (also a {rel.type} edge to the {rel.to} whose {rel.key} is this value)"
        ).strip()
    if description:
        schema["description"] = description
    return schema


def _entity_schema(
    entry: SchemaEntry, required: Iterable[str], only: Iterable[str] | None
) -> dict[str, Any]:
    names = list(dict.fromkeys([*entry.merge_keys, *entry.required_properties, *entry.properties]))
    if only is not None:
        names = list(only)
    return {
        "type": "object",
        "properties": {n: _property_schema(entry.properties.get(n), n) for n in names},
        "required": list(dict.fromkeys(required)),
        "additionalProperties": entry.additional_properties and only is None,
    }


def _tool_schema(key: str, entity: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: entity, **_ENVELOPE_PROPERTIES},
        "required": [key, "source", "extraction_method"],
        "additionalProperties": False,
    }


def _split(key: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], _Provenance]:
    entity = arguments.get(key)
    if not isinstance(entity, dict):
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"{key}: the entity must be an object of its properties",
            {"field": key},
        )
    envelope = parse_request(_Provenance, {k: v for k, v in arguments.items() if k != key})
    return entity, envelope


def _submit(call: ToolCall, items: list[dict[str, Any]], envelope: _Provenance) -> BaseModel:
    """One per-type call is one batch: all of its writes, or none."""
    return call.gate.write_batch(
        items=items, idempotency_key=envelope.idempotency_key, actor=call.actor, guard=call.guard
    )


def _values(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


class _LabelTools:
    """The three tools of one label; closures over its schema entry."""

    def __init__(self, entry: SchemaEntry, key: str) -> None:
        self.entry = entry
        self.key = key
        self.label = entry.label
        self.links = {n: p.relationship for n, p in entry.properties.items() if p.relationship}

    def _identify(self, entity: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        keys = {k: entity[k] for k in self.entry.merge_keys if k in entity}
        rest = {k: v for k, v in entity.items() if k not in keys}
        return keys, rest

    def _edge(
        self, op: str, prop: str, keys: dict[str, Any], value: Any, prov: dict[str, Any]
    ) -> dict[str, Any]:
        rel = self.links[prop]
        item = {
            "op": op,
            "type": rel.type,
            "from_label": self.label,
            "from_keys": keys,
            "to_label": rel.to,
            "to_keys": {rel.key: value},
            **prov,
        }
        if op == "write_relationship":
            item["endpoint_policy"] = "merge_endpoints"
        return item

    def add(self, call: ToolCall, arguments: dict[str, Any]) -> BaseModel:
        entity, envelope = _split(self.key, arguments)
        prov = envelope.fields()
        keys, properties = self._identify(entity)
        items: list[dict[str, Any]] = [
            {
                "op": "write_node",
                "label": self.label,
                "merge_keys": keys,
                "properties": properties,
                **prov,
            }
        ]
        for prop in self.links:
            items += [
                self._edge("write_relationship", prop, keys, v, prov)
                for v in _values(entity.get(prop))
            ]
        return _submit(call, items, envelope)

    def update(self, call: ToolCall, arguments: dict[str, Any]) -> BaseModel:
        entity, envelope = _split(self.key, arguments)
        prov = envelope.fields()
        keys, properties = self._identify(entity)
        conn = call.gate.log.connection()
        current = call.gate.state.node(conn, node_identity(self.label, keys)) if keys else None
        if current is None:
            raise GateRejection(
                ErrorCode.NODE_NOT_FOUND,
                f"no {self.label} with {keys} to update (use add_{self.key} to create it)",
                {"label": self.label, "keys": keys},
            )
        items: list[dict[str, Any]] = [
            {
                "op": "write_node",
                "label": self.label,
                "merge_keys": keys,
                "properties": properties,
                "if_version": current.version,  # nobody changed it since we read the old edges
                **prov,
            }
        ]
        source = node_identity(self.label, keys)
        for prop, rel in self.links.items():
            if prop not in entity:
                continue
            old, new = _values(current.properties.get(prop)), _values(entity[prop])
            for value in old:
                target = node_identity(rel.to, {rel.key: value})
                if value not in new and call.gate.state.relationship_exists(
                    conn, relationship_identity(rel.type, source, target)
                ):
                    items.append(self._edge("delete_relationship", prop, keys, value, prov))
            items += [
                self._edge("write_relationship", prop, keys, v, prov) for v in new if v not in old
            ]
        return _submit(call, items, envelope)

    def delete(self, call: ToolCall, arguments: dict[str, Any]) -> BaseModel:
        entity, envelope = _split(self.key, arguments)
        keys, _ = self._identify(entity)
        return call.gate.delete_node(
            actor=call.actor,
            guard=call.guard,
            label=self.label,
            merge_keys=keys,
            detach=True,
            **envelope.fields(),
            idempotency_key=envelope.idempotency_key,
        )

    def specs(self) -> list[ToolSpec]:
        entry, key = self.entry, self.key
        described = entry.description or f"a {self.label} node"
        keys = list(entry.merge_keys)
        return [
            ToolSpec(
                f"add_{key}",
                "write",
                f"Add {described} (merged on {keys}); relationship properties also create edges.",
                None,
                BatchResult,
                self.add,
                input_schema=_tool_schema(
                    key, _entity_schema(entry, [*keys, *entry.required_properties], None)
                ),
            ),
            ToolSpec(
                f"update_{key}",
                "write",
                f"Update an existing {self.label}: only the properties given change; a changed "
                "relationship property moves its edge.",
                None,
                BatchResult,
                self.update,
                input_schema=_tool_schema(key, _entity_schema(entry, keys, None)),
            ),
            ToolSpec(
                f"delete_{key}",
                "write",
                f"Delete a {self.label} and all its relationships (recorded as events).",
                None,
                DeleteNodeResult,
                self.delete,
                input_schema=_tool_schema(key, _entity_schema(entry, keys, keys)),
            ),
        ]


def typed_tools(snapshot: LoadedSchema, taken: Iterable[str]) -> list[ToolSpec]:
    """The per-type tools of a snapshot; a name already ``taken`` (a built-in) wins."""
    names = set(taken)
    tools: list[ToolSpec] = []
    registry = snapshot.registry
    for label in registry.all_canonical_labels():
        entry = registry.get_entry(label)
        if entry is None or not entry.merge_keys:
            continue  # without merge keys a node cannot be named, so no per-type tools
        specs = _LabelTools(entry, label.lower()).specs()
        if any(spec.name in names for spec in specs):
            continue
        names.update(spec.name for spec in specs)
        tools += specs
    return tools
