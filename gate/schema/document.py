"""The schema document operators write (YAML or JSON) and its validation.

A document is checked whole when it is loaded or published, so a bad schema
never reaches the gate: every name is a safe identifier, every remap points to
one canonical label, the fallback label exists, enum values fit their type.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from writegate.eventlog import canonical_json
from writegate.gate.identifiers import is_identifier, is_protected
from writegate.gate.limits import Limits

PropertyType = Literal["string", "integer", "number", "boolean", "array"]
ItemType = Literal["string", "integer", "number", "boolean"]
Policy = Literal["remap", "reject"]


class SchemaDocumentError(ValueError):
    """The document is unreadable or invalid; the message says where."""


class RelationshipRef(BaseModel):
    """A property whose value names another node and so also creates an edge (seed 001 §3.4)."""

    model_config = ConfigDict(extra="forbid")

    type: str
    to: str
    key: str = "name"
    description: str = ""


class PropertyDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: PropertyType | None = None  # None: any scalar or list of scalars
    items: ItemType | None = None
    enum: list[str | int | float | bool] | None = None
    description: str = ""
    relationship: RelationshipRef | None = None


class NodeTypeDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = ""
    merge_keys: list[str] = Field(default_factory=list)
    required: list[str] = Field(default_factory=list)
    remaps_from: list[str] = Field(default_factory=list)
    properties: dict[str, PropertyDoc] = Field(default_factory=dict)
    additional_properties: bool = True


class RelationshipTypeDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    description: str = ""
    from_labels: list[str] = Field(default_factory=list, alias="from")  # empty: any label
    to_labels: list[str] = Field(default_factory=list, alias="to")
    remaps_from: list[str] = Field(default_factory=list)
    required: list[str] = Field(default_factory=list)
    properties: dict[str, PropertyDoc] = Field(default_factory=dict)
    additional_properties: bool = True


class SchemaDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # fields added after the first format: left out of the version digest while unset, so
    # a document that does not use them keeps the version it always had
    _LATER_FIELDS: ClassVar[tuple[str, ...]] = ("limits",)

    name: str = "schema"
    description: str = ""
    unknown_label_policy: Policy = "remap"
    fallback_label: str | None = None
    # ':person' finds ':Person' without listing every casing in remaps_from
    case_insensitive_remap: bool = True
    nodes: dict[str, NodeTypeDoc]
    relationships: dict[str, RelationshipTypeDoc] = Field(default_factory=dict)
    limits: Limits | None = None  # how large a write may be (see ``gate.limits``)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        problems: list[str] = []
        aliases: dict[str, str] = {}

        def check_name(name: str, where: str) -> None:
            if not is_identifier(name):
                problems.append(f"{where}: {name!r} is not a valid identifier")

        def check_properties(
            owner: str, props: dict[str, PropertyDoc], required: list[str], keys: list[str]
        ) -> None:
            for prop, spec in props.items():
                check_name(prop, f"{owner}.properties")
                if is_identifier(prop) and is_protected(prop):
                    problems.append(f"{owner}.properties: {prop!r} is a gate-computed field")
                if spec.items and spec.type != "array":
                    problems.append(f"{owner}.{prop}: 'items' only applies to type array")
                for value in spec.enum or []:
                    if not _fits(value, spec.type, spec.items):
                        problems.append(f"{owner}.{prop}: enum value {value!r} is not {spec.type}")
                if spec.relationship is not None:
                    rel = spec.relationship
                    if rel.type not in self.relationships:
                        problems.append(
                            f"{owner}.{prop}: relationship type {rel.type!r} undeclared"
                        )
                    if rel.to not in self.nodes:
                        problems.append(
                            f"{owner}.{prop}: relationship target {rel.to!r} undeclared"
                        )
            for name in [*required, *keys]:
                check_name(name, f"{owner}.required/merge_keys")
                if is_identifier(name) and is_protected(name):
                    problems.append(f"{owner}: {name!r} is a gate-computed field")

        def claim(alias: str, target: str, where: str) -> None:
            check_name(alias, where)
            if alias in aliases and aliases[alias] != target:
                problems.append(
                    f"{where}: {alias!r} remaps to both {aliases[alias]!r} and {target!r}"
                )
            aliases[alias] = target

        for label, node in self.nodes.items():
            check_name(label, "nodes")
            check_properties(f"nodes.{label}", node.properties, node.required, node.merge_keys)
            for key in node.merge_keys:
                spec = node.properties.get(key)
                if spec is not None and spec.type == "array":
                    problems.append(f"nodes.{label}: merge key {key!r} must be a scalar")
            for alias in node.remaps_from:
                claim(alias.removeprefix(":"), label, f"nodes.{label}.remaps_from")
        for rtype, rel in self.relationships.items():
            check_name(rtype, "relationships")
            check_properties(f"relationships.{rtype}", rel.properties, rel.required, [])
            for end in [*rel.from_labels, *rel.to_labels]:
                if end not in self.nodes:
                    problems.append(f"relationships.{rtype}: endpoint label {end!r} undeclared")
            for alias in rel.remaps_from:
                claim(alias.removeprefix(":"), rtype, f"relationships.{rtype}.remaps_from")
        for alias, target in aliases.items():
            if alias in self.nodes or alias in self.relationships:
                problems.append(f"remaps_from: {alias!r} (-> {target!r}) is itself canonical")
        if self.fallback_label is not None and self.fallback_label not in self.nodes:
            problems.append(f"fallback_label {self.fallback_label!r} is not a declared node label")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def version(self) -> str:
        """Content digest: the same document has the same version from any source."""
        body = self.model_dump(mode="json", by_alias=True)
        for name in self._LATER_FIELDS:
            if body.get(name) is None:
                body.pop(name, None)
        digest = hashlib.sha256(canonical_json(body))
        return "sha256:" + digest.hexdigest()[:16]


def _fits(value: object, type_: str | None, items: str | None) -> bool:
    if type_ == "array":
        return items is None or _fits(value, items, None)
    return type_ is None or value_has_type(value, type_)


def value_has_type(value: object, type_: str) -> bool:
    """JSON-Schema-like type test for one scalar (``number`` accepts integers, not booleans)."""
    if type_ == "string":
        return isinstance(value, str)
    if type_ == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if type_ == "integer":
        return isinstance(value, int)
    if type_ == "number":
        return isinstance(value, int | float)
    return False


def parse_document(data: Any, origin: str = "schema") -> SchemaDocument:
    try:
        return SchemaDocument.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "document"
        raise SchemaDocumentError(
            f"{origin}: invalid schema at {where}: {first['msg']}"
            + (f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else "")
        ) from exc


def load_document(path: str | Path) -> SchemaDocument:
    """Read a YAML (``.yaml``/``.yml``) or JSON schema file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SchemaDocumentError(f"cannot read schema {path}: {exc.strerror or exc}") from exc
    import yaml  # noqa: PLC0415 (~15 ms, and only schema files are YAML: the log holds JSON)

    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise SchemaDocumentError(
            f"{path}: not valid {path.suffix.lstrip('.') or 'YAML'}: {exc}"
        ) from exc
    return parse_document(data, str(path))
