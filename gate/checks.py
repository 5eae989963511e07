"""Stateless checks of one write against a schema snapshot.

Everything here runs before the write transaction opens (no lock held) and
raises ``GateRejection`` with the precise code. The checks that need current
state (endpoints, versions, required properties of an existing node) run later,
inside the transaction, in ``gate.operations``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.identifiers import bare_label, check_identifier, is_protected
from writegate.gate.limits import exceeded
from writegate.gate.schema.document import value_has_type
from writegate.gate.schema.registry import (
    PropertySpec,
    RelationshipEntry,
    SchemaEntry,
    SchemaRegistry,
    relationship_types,
)
from writegate.language import NodeRef

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_LIST_ITEMS = 10_000


@dataclass(frozen=True)
class ResolvedLabel:
    label: str  # canonical
    remapped_from: str | None  # ':original' iff remapped
    entry: SchemaEntry


@dataclass(frozen=True)
class ResolvedType:
    type: str
    remapped_from: str | None
    entry: RelationshipEntry


def resolve_label(
    raw: str, registry: SchemaRegistry, policy: str, what: str = "label"
) -> ResolvedLabel:
    """Canonical label for ``raw``: exact, else a declared remap, else the fallback (remap mode)."""
    bare = bare_label(raw, what)
    entry = registry.get_entry(bare)
    if entry is not None:
        return ResolvedLabel(bare, None, entry)
    target = registry.remap_target(bare)
    if target is not None and (entry := registry.get_entry(target)) is not None:
        return ResolvedLabel(target, ":" + bare, entry)
    fallback = registry.fallback_label() if policy == "remap" else None
    if fallback is not None and (entry := registry.get_entry(fallback)) is not None:
        return ResolvedLabel(fallback, ":" + bare, entry)
    reason = "reject mode" if policy == "reject" else "no fallback label configured"
    raise GateRejection(
        ErrorCode.SCHEMA_UNKNOWN_LABEL,
        f"{what} {raw!r} is not in the schema and has no remap target ({reason})",
        {"field": what, "value": raw, "known_labels": registry.all_canonical_labels()},
    )


def resolve_type(raw: str, registry: SchemaRegistry) -> ResolvedType:
    """Relationship types remap only by declaration: an unknown type never falls back (#127)."""
    bare = bare_label(raw, "type")
    entry = registry.get_relationship_type(bare)
    if entry is not None:
        return ResolvedType(bare, None, entry)
    target = registry.relationship_remap_target(bare)
    if target is not None and (entry := registry.get_relationship_type(target)) is not None:
        return ResolvedType(target, ":" + bare, entry)
    known = relationship_types(registry)
    raise GateRejection(
        ErrorCode.SCHEMA_UNKNOWN_LABEL,
        f"relationship type {raw!r} is not in the schema and has no remap target",
        {"field": "type", "value": raw, "known_types": known},
    )


def check_endpoint(rtype: ResolvedType, side: str, ref: NodeRef) -> None:
    """A relationship's end (``from`` / ``to``) at a label its type allows; the refusal
    names the node itself — which of many, in a batch or an import — and how it was written."""
    allowed = rtype.entry.from_labels if side == "from" else rtype.entry.to_labels
    if not allowed or ref.label in allowed:
        return
    named = ref.identity + (f" (written {ref.remapped_from})" if ref.remapped_from else "")
    raise GateRejection(
        ErrorCode.SCHEMA_ENDPOINT_LABEL_NOT_ALLOWED,
        f"{rtype.type} may not {'start' if side == 'from' else 'end'} at {named}: a "
        f"{ref.label} ({side} must be one of {list(allowed)})",
        {
            "type": rtype.type,
            "end": side,
            "label": ref.label,
            "allowed": list(allowed),
            "node": ref.identity,
        },
    )


def check_names(names: Mapping[str, Any], what: str) -> None:
    """Property and key names: safe identifiers, and never a gate-computed field."""
    for name in names:
        check_identifier(name, f"{what} name")
    protected = sorted(n for n in names if is_protected(n))
    if protected:
        raise GateRejection(
            ErrorCode.SCHEMA_PROTECTED_FIELD,
            f"{what} may not set gate-computed field(s) {protected}",
            {"field": what, "protected": protected},
        )


def _scalar_ok(value: Any) -> bool:
    if isinstance(value, bool | str):
        return True
    if isinstance(value, int):
        return INT64_MIN <= value <= INT64_MAX
    if isinstance(value, float):
        return math.isfinite(value)
    return False


def check_value_shape(name: str, value: Any, what: str) -> None:
    """What any graph store can hold: a scalar, a homogeneous list of scalars, or null (remove)."""
    if value is None or _scalar_ok(value):
        return
    if isinstance(value, list) and len(value) > MAX_LIST_ITEMS:  # a fixed bound, as the kinds
        raise exceeded("max_list_items", MAX_LIST_ITEMS, len(value), f"{what}.{name}")
    if isinstance(value, list) and all(map(_scalar_ok, value)):
        kinds = {
            bool if isinstance(v, bool) else (float if isinstance(v, int) else type(v))
            for v in value
        }
        if len(kinds) <= 1:
            return
    raise GateRejection(
        ErrorCode.INVALID_ARGUMENT,
        f"{what}.{name} must be a string, boolean, 64-bit integer, finite number, null, or a "
        "list of one of those kinds",
        {"field": f"{what}.{name}", "got": type(value).__name__},
    )


def check_keys(keys: Mapping[str, Any], entry: SchemaEntry | None, what: str) -> None:
    """Merge keys: scalars (never null), and exactly the label's declared keys when it has any
    (whatever else the write says: a wrong key is the first thing to hear about)."""
    check_names(keys, what)
    for name, value in keys.items():
        if not _scalar_ok(value):
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                f"{what}.{name} must be a scalar (string, boolean, 64-bit integer, finite number)",
                {"field": f"{what}.{name}", "got": type(value).__name__},
            )
    if entry is not None and entry.merge_keys and set(keys) != set(entry.merge_keys):
        raise GateRejection(
            ErrorCode.SCHEMA_MERGE_KEY_MISMATCH,
            f"{what} for {entry.label} must be exactly {list(entry.merge_keys)}, "
            f"not {sorted(keys)}",
            {"label": entry.label, "merge_keys": list(entry.merge_keys), "got": sorted(keys)},
        )
    for name, value in keys.items():
        spec = entry.properties.get(name) if entry is not None else None
        if spec is not None:
            check_declared(spec, value, f"{what}.{name}")


def check_properties(
    properties: Mapping[str, Any],
    declared: Mapping[str, PropertySpec],
    additional: bool,
    owner: str,
) -> list[str]:
    """Refuses what the schema refuses; returns the undeclared names it allows (sorted)."""
    check_names(properties, "properties")
    for name, value in properties.items():
        check_value_shape(name, value, "properties")
    unknown = sorted(n for n in properties if n not in declared)
    if unknown and not additional:
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_PROPERTY,
            f"{owner} does not allow undeclared properties {unknown}",
            {"owner": owner, "unknown": unknown, "declared": sorted(declared)},
        )
    for name, value in properties.items():
        spec = declared.get(name)
        if spec is not None and value is not None:
            check_declared(spec, value, f"properties.{name}")
    return unknown


def check_declared(spec: PropertySpec, value: Any, where: str) -> None:
    """Declared type and enum of one (non-null) value."""
    if spec.type is not None:
        if spec.type == "array":
            ok = isinstance(value, list) and (
                spec.items is None or all(value_has_type(v, spec.items) for v in value)
            )
            expected = f"array of {spec.items}" if spec.items else "array"
        else:
            ok = value_has_type(value, spec.type)
            expected = spec.type
        if not ok:
            raise GateRejection(
                ErrorCode.SCHEMA_TYPE_MISMATCH,
                f"{where} must be {expected}, got {type(value).__name__} {value!r}"[:300],
                {"field": where, "expected": expected, "got": type(value).__name__},
            )
    if spec.enum is not None:
        values = value if isinstance(value, list) else [value]
        bad = [v for v in values if not _in_enum(v, spec.enum)]
        if bad:
            raise GateRejection(
                ErrorCode.SCHEMA_ENUM_VIOLATION,
                f"{where} must be one of {list(spec.enum)}, got {bad[0]!r}"[:300],
                {"field": where, "allowed": list(spec.enum), "got": bad[0]},
            )


def _in_enum(value: Any, allowed: tuple[Any, ...]) -> bool:
    # True == 1 in Python: an enum of ints must not accept True, nor an enum of bools 1.
    return any(value == a and isinstance(value, bool) == isinstance(a, bool) for a in allowed)


def reconcile_keys_and_properties(
    keys: Mapping[str, Any], properties: Mapping[str, Any], what: str
) -> dict[str, Any]:
    """A key repeated in properties must agree; it is then dropped from the changes."""
    clash = sorted(n for n in keys.keys() & properties.keys() if properties[n] != keys[n])
    if clash:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"{clash} appear in both {what} and properties with different values",
            {"conflicting": clash},
        )
    return {n: v for n, v in properties.items() if n not in keys}


def missing_required(
    required: list[str],
    keys: Mapping[str, Any],
    changes: Mapping[str, Any],
    existing: Mapping[str, Any],
) -> list[str]:
    """Required properties absent from the node as it will be after ``SET n += changes``."""
    missing = []
    for name in required:
        if name in keys:
            continue
        if name in changes:
            if changes[name] is None:
                missing.append(name)
            continue
        if name not in existing:
            missing.append(name)
    return missing


def missing(
    owner: str, absent: list[str], required: list[str], where: str = "node"
) -> GateRejection:
    looked = {
        "node": "merge_keys, properties and the stored node",
        "request": "merge_keys and properties",
        "relationship": "the properties of this new relationship",
    }[where]
    return GateRejection(
        ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY,
        f"{owner} requires {absent} (absent from {looked}, or set to null)",
        {"missing": absent, "required": required, "label": owner},
    )
