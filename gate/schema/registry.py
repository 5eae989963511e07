"""The ``SchemaRegistry`` protocol (seed 000) and the immutable snapshot that implements it.

``SchemaEntry`` keeps seed 000's three fields first and adds what a real schema
needs (merge keys, property specs); any third-party registry that fills only the
seed's fields still works: the gate treats the extras as "not declared".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.schema.authority import Lower, on_lower
from writegate.gate.schema.document import (
    ConflictPolicy,
    PropertyDoc,
    RelationshipRef,
    ResolutionDoc,
    ReviewRule,
    SchemaDocument,
)


@dataclass(frozen=True)
class PropertySpec:
    name: str
    type: str | None = None
    items: str | None = None
    enum: tuple[str | int | float | bool, ...] | None = None
    description: str = ""
    relationship: RelationshipRef | None = None
    conflict: ConflictPolicy | None = None  # None: the owner's policy
    many: bool = False
    personal: bool = False  # sealed with the subject of the node holding it
    searchable: bool = True  # False: kept out of the text index


@dataclass(frozen=True)
class SchemaEntry:
    label: str  # Canonical label
    required_properties: list[str] = field(default_factory=list)
    remaps_from: list[str] = field(default_factory=list)
    # beyond seed 000
    merge_keys: tuple[str, ...] = ()
    properties: Mapping[str, PropertySpec] = field(default_factory=dict)
    additional_properties: bool = True
    description: str = ""
    conflict: ConflictPolicy = "supersede"  # for its properties, unless one says otherwise
    review_below: float | None = None  # a confidence floor: writes below it are held
    resolution: ResolutionDoc | None = None  # duplicates looked for on create (None: off)
    # the other labels of its identity group, with their resolution (looked across too)
    group: Mapping[str, ResolutionDoc] = field(default_factory=dict)
    review_rules: tuple[ReviewRule, ...] = ()  # the document's rules that cover it
    scope: str | None = None  # the scope its nodes belong to (None: the implicit one)
    scopes: tuple[str, ...] = ()  # the scopes a write may choose among (none: only ``scope``)
    personal: bool = False  # its nodes are subjects (``gate.personal``)
    self_review: bool = False  # a writer may decide its own held writes (``gate.review``)
    lower_authority: Lower = "refuse"  # a write of lower authority (``gate.authority``)

    @cached_property
    def unsearchable(self) -> list[str]:
        """Its properties kept out of the text index, in order (a write's event says them)."""
        return sorted(name for name, spec in self.properties.items() if not spec.searchable)


@dataclass(frozen=True)
class RelationshipEntry:
    type: str
    from_labels: tuple[str, ...] = ()  # empty: any label
    to_labels: tuple[str, ...] = ()
    remaps_from: list[str] = field(default_factory=list)
    required_properties: list[str] = field(default_factory=list)
    properties: Mapping[str, PropertySpec] = field(default_factory=dict)
    additional_properties: bool = True
    description: str = ""
    functional: bool = False  # at most one per start node
    conflict: ConflictPolicy = "supersede"
    review_below: float | None = None
    review_rules: tuple[ReviewRule, ...] = ()
    self_review: bool = False
    lower_authority: Lower = "refuse"


@runtime_checkable
class SchemaRegistry(Protocol):
    def get_entry(self, label: str) -> SchemaEntry | None: ...

    def all_canonical_labels(self) -> list[str]: ...

    def remap_target(self, label: str) -> str | None: ...

    def fallback_label(self) -> str | None: ...  # Used when policy=remap and no match

    # relationship-type lookup, the same shape for types
    def get_relationship_type(self, type: str) -> RelationshipEntry | None: ...

    def relationship_remap_target(self, type: str) -> str | None: ...


def _specs(props: Mapping[str, PropertyDoc]) -> Mapping[str, PropertySpec]:
    return MappingProxyType(
        {
            name: PropertySpec(
                name,
                p.type,
                p.items,
                tuple(p.enum) if p.enum is not None else None,
                p.description,
                p.relationship,
                p.conflict,
                p.many,
                p.personal,
                p.searchable,
            )
            for name, p in props.items()
        }
    )


class Schema:
    """An immutable snapshot of one schema document; implements ``SchemaRegistry``."""

    def __init__(self, document: SchemaDocument) -> None:
        self.document = document
        self.version = document.version()
        self.unknown_label_policy = document.unknown_label_policy
        default: ConflictPolicy = document.conflict or "supersede"
        groups = _groups(document)
        self._nodes = {
            label: SchemaEntry(
                label=label,
                required_properties=list(n.required),
                remaps_from=list(n.remaps_from),
                merge_keys=tuple(n.merge_keys),
                properties=_specs(n.properties),
                additional_properties=n.additional_properties,
                description=n.description,
                conflict=n.conflict or default,
                review_below=n.review_below,
                resolution=n.resolution,
                group=groups.get(label, {}),
                review_rules=_rules_for(document, label),
                scope=n.scope,
                scopes=tuple(n.scopes or ()),
                personal=n.personal,
                self_review=n.self_review,
                lower_authority=on_lower(document.authority, label),
            )
            for label, n in document.nodes.items()
        }
        self._rels = {
            rtype: RelationshipEntry(
                type=rtype,
                from_labels=tuple(r.from_labels),
                to_labels=tuple(r.to_labels),
                remaps_from=list(r.remaps_from),
                required_properties=list(r.required),
                properties=_specs(r.properties),
                additional_properties=r.additional_properties,
                description=r.description,
                functional=r.functional,
                conflict=r.conflict or default,
                review_below=r.review_below,
                review_rules=_rules_for(document, rtype),
                self_review=r.self_review,
                lower_authority=on_lower(document.authority, rtype),
            )
            for rtype, r in document.relationships.items()
        }
        fold = document.case_insensitive_remap
        self._node_aliases = _alias_map(self._nodes, fold)
        self._rel_aliases = _alias_map(self._rels, fold)
        self._fold = fold

    def get_entry(self, label: str) -> SchemaEntry | None:
        return self._nodes.get(label)

    def all_canonical_labels(self) -> list[str]:
        return sorted(self._nodes)

    def remap_target(self, label: str) -> str | None:
        return _lookup(self._node_aliases, label.removeprefix(":"), self._fold)

    def fallback_label(self) -> str | None:
        return self.document.fallback_label

    def get_relationship_type(self, type: str) -> RelationshipEntry | None:
        return self._rels.get(type)

    def relationship_remap_target(self, type: str) -> str | None:
        return _lookup(self._rel_aliases, type.removeprefix(":"), self._fold)

    def all_relationship_types(self) -> list[str]:
        return sorted(self._rels)


def _rules_for(document: SchemaDocument, name: str) -> tuple[ReviewRule, ...]:
    return tuple(r for r in document.review_rules or () if not r.labels or name in r.labels)


def _groups(document: SchemaDocument) -> dict[str, dict[str, ResolutionDoc]]:
    """Label -> the other labels of its identity group, with their resolution rules."""
    found: dict[str, dict[str, ResolutionDoc]] = {}
    for labels in (document.identity_groups or {}).values():
        for label in labels:
            found[label] = {
                other: rules
                for other in labels
                if other != label and (rules := document.nodes[other].resolution) is not None
            }
    return found


def relationship_types(registry: SchemaRegistry) -> list[str]:
    """Declared relationship types, for registries that can list them (seed 000's need not)."""
    listed = getattr(registry, "all_relationship_types", None)
    return list(listed()) if callable(listed) else []


def _alias_map(
    entries: Mapping[str, SchemaEntry | RelationshipEntry], fold: bool
) -> dict[str, str]:
    """alias -> canonical; with ``fold`` also the casefolded canonical names and aliases."""
    aliases: dict[str, str] = {}
    for canonical, entry in entries.items():
        for alias in entry.remaps_from:
            aliases[alias.removeprefix(":")] = canonical
    if fold:
        for canonical, entry in entries.items():
            aliases.setdefault(canonical.casefold(), canonical)
            for alias in entry.remaps_from:
                aliases.setdefault(alias.removeprefix(":").casefold(), canonical)
    return aliases


def _lookup(aliases: Mapping[str, str], name: str, fold: bool) -> str | None:
    found = aliases.get(name)
    if found is None and fold:
        found = aliases.get(name.casefold())
    return found


def _property_view(spec: PropertySpec) -> dict[str, object]:
    view: dict[str, object] = {"type": spec.type, "description": spec.description}
    if spec.items:
        view["items"] = spec.items
    if spec.enum is not None:
        view["enum"] = list(spec.enum)
    if spec.relationship is not None:
        view["relationship"] = spec.relationship.model_dump()
    if not spec.searchable:  # an agent then knows no search meets its values
        view["searchable"] = False
    return view


def _entry_view(entry: SchemaEntry | RelationshipEntry) -> dict[str, object]:
    return {
        "description": entry.description,
        "required": list(entry.required_properties),
        "remaps_from": list(entry.remaps_from),
        "additional_properties": entry.additional_properties,
        "properties": {n: _property_view(p) for n, p in entry.properties.items()},
    }


def _scoped(entry: SchemaEntry) -> dict[str, object]:
    """Where a label's nodes are kept, as declared (nothing where it declares no scope):
    a writer learns from the schema, not from a refusal, where it may write them."""
    view: dict[str, object] = {"scope": entry.scope} if entry.scope else {}
    return view | ({"scopes": list(entry.scopes)} if entry.scopes else {})


def describe_registry(
    registry: SchemaRegistry, labels: Sequence[str] | None = None
) -> dict[str, object]:
    """A JSON view of any registry (not only document-backed ones), for agents and
    resources; given ``labels``, only theirs and the relationship types that touch them
    (what an agent writing those labels needs, at a cost that does not grow with the rest)."""
    nodes = {}
    for label in registry.all_canonical_labels() if labels is None else labels:
        entry = registry.get_entry(label)
        if entry is None:
            continue
        nodes[label] = {
            "merge_keys": list(entry.merge_keys),
            **_scoped(entry),
            **_entry_view(entry),
        }
    relationships = {}
    for rtype in relationship_types(registry):
        rel = registry.get_relationship_type(rtype)
        if rel is None or not touches(rel, labels):
            continue
        relationships[rtype] = {
            "from": list(rel.from_labels),
            "to": list(rel.to_labels),
            **_entry_view(rel),
        }
    return {
        "nodes": nodes,
        "relationships": relationships,
        "fallback_label": registry.fallback_label(),
    }


def named_labels(registry: SchemaRegistry, names: Sequence[str]) -> list[str]:
    """The labels ``names`` name (a synonym read as its label), for one label's detail;
    a name that is none is a ``SCHEMA_UNKNOWN_LABEL`` naming the schema's labels."""
    labels = []
    for name in names:
        label = name if registry.get_entry(name) is not None else registry.remap_target(name)
        if label is None or registry.get_entry(label) is None:
            known = ", ".join(registry.all_canonical_labels())
            raise GateRejection(
                ErrorCode.SCHEMA_UNKNOWN_LABEL,
                f"{name!r} is no label of the schema ({known})",
                {"label": name},
            )
        labels.append(label)
    return list(dict.fromkeys(labels))


def touches(rel: RelationshipEntry, labels: Sequence[str] | None) -> bool:
    """Whether a relationship type may start or end at one of ``labels`` (None: all)."""
    ends = (*rel.from_labels, *rel.to_labels)
    return labels is None or not ends or any(label in ends for label in labels)
