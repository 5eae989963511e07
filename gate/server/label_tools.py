"""Per-label tools (seed 001): ``add_<label>``, ``update_<label>``, ``delete_<label>``.

Each canonical label of the current snapshot yields three tools whose argument model is
generated from the label's declaration (pydantic's ``create_model``: properties, types,
enums, required ones) — the same model publishes the input schema and validates the
call. The entity travels under the label's lower-cased name, as seed 001 does:
``add_person({"person": {...}, "source": ..., "extraction_method": ...})``; the names
are the schema's own (a MemoryMesh ``homeBase`` stays ``homeBase``).

They are conveniences over the same gate, never a second path: each call is one
``write_batch`` (or ``delete_node``), so it is atomic, schema-checked, policy-guarded and
stamped with provenance like any other write. ``add_`` refuses a node that exists
(``NODE_ALREADY_EXISTS``, seed 001 §4.2; it fills a stub). A property declared with a
``relationship`` also makes an edge to the node it names (its target becomes a stub if
absent); updating it moves the edge (seed 001 §3.4).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    create_model,
)

from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import (
    IDEMPOTENCY,
    BatchResult,
    Cited,
    CodeOf,
    DeleteNodeResult,
    Rejected,
    Reliability,
    cites,
)
from writegate.gate.relationship_properties import current_node, node_with_edges
from writegate.gate.schema import LoadedSchema
from writegate.gate.schema.registry import PropertySpec, SchemaEntry
from writegate.gate.server.tools import ToolCall, ToolSpec
from writegate.language import node_identity

_SCALARS: dict[str, Any] = {
    "string": StrictStr,
    "integer": StrictInt,
    "number": StrictInt | StrictFloat,
    "boolean": StrictBool,
}
Kind = Literal["add", "update", "delete"]


class _Existing(BaseModel):
    """The node a ``NODE_ALREADY_EXISTS`` names: the one the write met, which is not the
    one named when the name is a merged duplicate's or resolution landed it elsewhere."""

    model_config = ConfigDict(extra="ignore")

    label: str
    keys: dict[str, Any]
    version: int


def _annotation(spec: PropertySpec | None) -> Any:
    if spec is None or spec.type is None:
        return Any
    if spec.type == "array":
        item = Literal[tuple(spec.enum)] if spec.enum else _SCALARS.get(spec.items or "", Any)
        return list[item]  # type: ignore[valid-type]
    return Literal[tuple(spec.enum)] if spec.enum else _SCALARS[spec.type]


def _describe(spec: PropertySpec | None, name: str) -> str:
    text = (spec.description if spec else "") or name.replace("_", " ")
    if spec is not None and spec.relationship is not None:
        rel = spec.relationship
        text += f" (also a {rel.type} edge to the {rel.to} whose {rel.key} is this value)"
    return text


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def entity_model(entry: SchemaEntry, kind: Kind) -> type[BaseModel]:
    """The entity's fields: all declared ones for add/update (keys and required ones
    required by add, keys by update), the merge keys alone for delete."""
    keys = list(entry.merge_keys)
    if kind == "delete":
        names = keys
    else:
        names = list(dict.fromkeys([*keys, *entry.required_properties, *entry.properties]))
    required = set(keys) | (set(entry.required_properties) if kind == "add" else set())
    fields: dict[str, Any] = {}
    for name in names:
        spec = entry.properties.get(name)
        annotation = _annotation(spec)
        description = _describe(spec, name)
        if name in required:
            fields[f"p_{name}"] = (annotation, Field(alias=name, description=description))
        else:  # optional, not nullable: absent means unchanged
            fields[f"p_{name}"] = (
                annotation,
                Field(
                    default=None,
                    alias=name,
                    description=description,
                    json_schema_extra=_no_default,
                ),
            )
    extra: Literal["allow", "forbid"] = (
        "allow" if entry.additional_properties and kind != "delete" else "forbid"
    )
    model: type[BaseModel] = create_model(
        f"{entry.label}{kind.title()}Entity",
        __config__=ConfigDict(extra=extra, frozen=True, populate_by_name=True),
        **fields,
    )
    return model


def arguments_model(entry: SchemaEntry, key: str, kind: Kind) -> type[BaseModel]:
    entity = entity_model(entry, kind)
    what = {"add": "The new", "update": "The changes to the", "delete": "Which"}[kind]
    return create_model(
        f"{kind.title()}{entry.label}Args",
        __config__=ConfigDict(extra="forbid", frozen=True),
        **{
            key: (entity, Field(description=f"{what} {entry.label} (its properties).")),
            "source": (
                StrictStr,
                Field(min_length=1, description="Where this came from (URL, file, tool)."),
            ),
            "extraction_method": (
                StrictStr,
                Field(min_length=1, description="How it was obtained; it sets the confidence."),
            ),
            "reliability": (
                Reliability,
                Field(
                    default=0.5,
                    description="How reliable the source is, from 0 to 1.",
                    json_schema_extra={"minimum": 0, "maximum": 1},
                ),
            ),
            "idempotency_key": (
                StrictStr | None,
                Field(default=None, min_length=1, max_length=200, description=IDEMPOTENCY),
            ),
            **({} if kind == "delete" else {"observations": (Cited, cites())}),
            **_scope_field(entry, kind),
        },
    )


def _scope_field(entry: SchemaEntry, kind: Kind) -> dict[str, Any]:
    """A label kept in one of several scopes lets the write choose (the first, unless
    named); a write to another moves the node there, as ``write_node``'s ``scope`` does."""
    if kind == "delete" or len(entry.scopes) < 2:
        return {}
    return {
        "scope": (
            Literal[tuple(entry.scopes)],  # absent: the default (never null, as a property)
            Field(
                default=None,
                description=f"The scope to keep it in (default {entry.scopes[0]}).",
                json_schema_extra=_no_default,
            ),
        )
    }


_TYPE_ERRORS = ("string_type", "int_type", "float_type", "bool_type", "list_type", "int_from_float")


def entity_code(key: str) -> CodeOf:
    """A failure inside the entity is the schema's own code, as the gate would give it; one
    in the envelope (source, method, …) is a malformed call."""

    def code_of(error: Mapping[str, Any]) -> ErrorCode:
        location = error.get("loc", ())
        if not location or location[0] != key or len(location) < 2:
            return ErrorCode.INVALID_ARGUMENT
        kind = str(error.get("type", ""))
        if kind == "literal_error":
            return ErrorCode.SCHEMA_ENUM_VIOLATION
        if kind in _TYPE_ERRORS:
            return ErrorCode.SCHEMA_TYPE_MISMATCH
        if kind == "extra_forbidden":
            return ErrorCode.SCHEMA_UNKNOWN_PROPERTY
        if kind == "missing":
            return ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY
        return ErrorCode.INVALID_ARGUMENT

    return code_of


@dataclass(frozen=True)
class Call:
    """One per-label call, read from its validated argument model."""

    entity: dict[str, Any]
    envelope: dict[str, Any]  # source, extraction_method, reliability: as given
    idempotency_key: str | None


class LabelTools:
    """The three tools of one label."""

    def __init__(self, entry: SchemaEntry, key: str) -> None:
        self.entry = entry
        self.key = key
        self.label = entry.label

    def _parse(self, args: BaseModel) -> Call:
        """What the validated arguments say, under the schema's own property names (the
        entity model's fields carry them as aliases); what the agent left out stays out."""
        values = args.model_dump(by_alias=True, exclude_unset=True)
        entity = values.pop(self.key)
        key = values.pop("idempotency_key", None)
        return Call(entity=entity, envelope=values, idempotency_key=key)

    def _keys(self, entity: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        keys = {k: entity[k] for k in self.entry.merge_keys if k in entity}
        return keys, {k: v for k, v in entity.items() if k not in keys}

    def _submit(
        self,
        call: ToolCall,
        parsed: Call,
        items: list[dict[str, Any]],
        asked: dict[str, Any] | None = None,
    ) -> BatchResult | Rejected:
        key = parsed.idempotency_key
        return call.gate.writer.batch(items, key, call.actor, call.guard, asked=asked)

    def add(self, call: ToolCall, args: BaseModel) -> BaseModel:
        parsed = self._parse(args)
        entity, prov = parsed.entity, parsed.envelope
        keys, properties = self._keys(entity)
        node = {
            "op": "write_node",
            "label": self.label,
            "merge_keys": keys,
            "properties": properties,
            "create_only": True,
            **prov,
        }
        items = node_with_edges(call.gate, self.entry, node, None)
        result = self._submit(call, parsed, items)
        if isinstance(result, Rejected) and result.error_code == ErrorCode.NODE_ALREADY_EXISTS:
            met = _Existing.model_validate(result.details)  # through an alias, or resolved
            there, named = node_identity(met.label, met.keys), node_identity(self.label, keys)
            via = "" if there == named else f"; {named} lands on it"
            message = f"{there} already exists (version {met.version}{via}); "
            return result.model_copy(
                update={"message": message + f"change it with update_{self.key}"}
            )
        return result

    def update(self, call: ToolCall, args: BaseModel) -> BaseModel:
        parsed = self._parse(args)
        entity, prov = parsed.entity, parsed.envelope
        keys, properties = self._keys(entity)
        current = current_node(call.gate, self.entry, keys)
        if current is None:
            raise nothing_to_update(self.label, keys)
        node = {
            "op": "write_node",
            "label": self.label,
            "merge_keys": keys,
            "properties": properties,
            **prov,
        }
        at = {**node, "if_version": current.version}  # nobody changed it since we read its edges
        items = node_with_edges(call.gate, self.entry, at, current)
        return self._submit(call, parsed, items, asked=node)  # a retry reads the moved version

    def delete(self, call: ToolCall, args: BaseModel) -> BaseModel:
        parsed = self._parse(args)
        keys, _ = self._keys(parsed.entity)
        return call.gate.delete_node(
            actor=call.actor,
            guard=call.guard,
            label=self.label,
            merge_keys=keys,
            detach=True,
            idempotency_key=parsed.idempotency_key,
            **parsed.envelope,
        )

    def specs(self) -> list[ToolSpec]:
        entry, key, label = self.entry, self.key, self.label
        about = f" ({entry.description})" if entry.description else ""
        a = _article(label)
        keys = ", ".join(entry.merge_keys)
        return [
            replace(spec, labels=(label,))
            for spec in [
                ToolSpec(
                    f"add_{key}",
                    "write",
                    f"Add {a} {label}{about}, named by {keys}; refused if it exists. Properties "
                    "that name another node also create the edge to it.",
                    arguments_model(entry, key, "add"),
                    BatchResult,
                    self.add,
                    family="labels",
                    code_of=entity_code(key),
                ),
                ToolSpec(
                    f"update_{key}",
                    "write",
                    f"Update an existing {label}: only the properties given change; a changed "
                    "property that names another node moves its edge.",
                    arguments_model(entry, key, "update"),
                    BatchResult,
                    self.update,
                    family="labels",
                    code_of=entity_code(key),
                ),
                ToolSpec(
                    f"delete_{key}",
                    "write",
                    f"Delete {a} {label} and its relationships (recorded as events; the log "
                    "keeps their history).",
                    arguments_model(entry, key, "delete"),
                    DeleteNodeResult,
                    self.delete,
                    destructive=True,
                    family="labels",
                    code_of=entity_code(key),
                ),
            ]
        ]


def nothing_to_update(label: str, keys: Mapping[str, Any]) -> GateRejection:
    """``update_<label>`` of a node that is not there."""
    return GateRejection(
        ErrorCode.NODE_NOT_FOUND,
        f"no {label} with {dict(keys)} to update (use add_{label.lower()} to create it)",
        {"label": label, "keys": dict(keys)},
    )


def label_tools(snapshot: LoadedSchema, taken: Iterable[str]) -> list[ToolSpec]:
    """The per-label tools of a snapshot; a name already ``taken`` (a built-in) wins."""
    names = set(taken)
    tools: list[ToolSpec] = []
    registry = snapshot.registry
    for label in registry.all_canonical_labels():
        entry = registry.get_entry(label)
        if entry is None or not entry.merge_keys:
            continue  # without merge keys a node cannot be named, so no per-label tools
        specs = LabelTools(entry, label.lower()).specs()
        if any(spec.name in names for spec in specs):
            continue
        names.update(spec.name for spec in specs)
        tools += specs
    return tools
