"""What publishing a schema would change, and what it would do to the data already written.

``diff_documents`` compares two documents: labels and relationship types added or removed,
remaps, merge keys, required properties, property types and enums, closed or opened
property sets, allowed endpoints, the fallback label and the policy. ``schema_diff`` adds
the impact on live data (``gate.schema.impact``). A change is safe when it strands nothing
and invalidates nothing; ``schema publish`` refuses any other unless forced.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter, computed_field

from writegate.eventlog.sql import Sql
from writegate.gate.schema.document import (
    NodeTypeDoc,
    PropertyDoc,
    RelationshipTypeDoc,
    SchemaDocument,
)
from writegate.gate.schema.impact import Impact, live_impact
from writegate.gate.schema.registry import Schema
from writegate.projections.state import StateReader

Of = Literal["label", "relationship_type", "schema"]
ChangeKind = Literal[
    "added",
    "removed",
    "remap_added",
    "remap_removed",
    "merge_keys_changed",
    "required_added",
    "required_removed",
    "property_added",
    "property_removed",
    "property_type_changed",
    "enum_changed",
    "edge_changed",  # a relationship property's edge
    "closed",  # undeclared properties no longer allowed
    "opened",
    "from_changed",  # the labels a relationship may start at (empty: any)
    "to_changed",
    "setting_changed",  # fallback_label, unknown_label_policy, case_insensitive_remap, …
    "policy_changed",  # conflict, functional, many, review_below: what a change of a fact does
]
_FROZEN = ConfigDict(frozen=True)


class Change(BaseModel):
    """One difference: ``of`` a label, a relationship type or the schema's settings."""

    model_config = _FROZEN

    of: Of
    name: str
    kind: ChangeKind
    property: str | None = None
    before: JsonValue = None
    after: JsonValue = None

    def describe(self) -> str:
        subject = {"label": "label ", "relationship_type": "type ", "schema": ""}[self.of]
        subject += self.name + (f".{self.property}" if self.property else "")
        sign = {"added": "+", "removed": "-"}.get(self.kind, "~")
        before, after = _text(self.before), _text(self.after)
        text = {
            "added": "added",
            "removed": "removed",
            "remap_added": f"now remaps {after}",
            "remap_removed": f"no longer remaps {before}",
            "merge_keys_changed": f"merge keys {before} -> {after}",
            "required_added": "now required",
            "required_removed": "no longer required",
            "property_added": "declared",
            "property_removed": "no longer declared",
            "property_type_changed": f"type {before} -> {after}",
            "enum_changed": _enum_change(self.before, self.after),
            "edge_changed": f"edge {before} -> {after}",
            "closed": "undeclared properties no longer allowed",
            "opened": "undeclared properties now allowed",
            "from_changed": f"may start at {_text(self.before, 'any label')} -> "
            f"{_text(self.after, 'any label')}",
            "to_changed": f"may end at {_text(self.before, 'any label')} -> "
            f"{_text(self.after, 'any label')}",
            "setting_changed": f"{before} -> {after}",
            "policy_changed": f"{before} -> {after}",
        }[self.kind]
        return f"{sign} {subject}: {text}"


def _text(value: JsonValue, empty: str = "none") -> str:
    """A value as a person reads it: ``uri, title``, ``conflict: reject``, ``none``."""
    if value is None or value in ([], {}):
        return empty
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_text(v, 'default')}" for k, v in value.items())
    return str(value)


def _enum_change(before: JsonValue, after: JsonValue) -> str:
    if not isinstance(before, list) or not isinstance(after, list):
        return f"enum {_text(before, 'any value')} -> {_text(after, 'any value')}"
    dropped = [v for v in before if v not in after]
    added = [v for v in after if v not in before]
    return "enum " + ", ".join(
        [
            *([f"drops {_text(dropped)}"] if dropped else []),
            *([f"adds {_text(added)}"] if added else []),
        ]
    )


class SchemaDiff(BaseModel):
    """A change from one schema version to another and its impact on live data."""

    model_config = _FROZEN

    before: str | None  # the version in force (None: nothing published yet)
    after: str
    state_seq: int  # the state read model the impact was read from
    changes: list[Change]
    impact: list[Impact]
    forced: bool = False  # published although unsafe

    @computed_field  # type: ignore[prop-decorator]
    @property
    def safe(self) -> bool:
        """Nothing stranded, nothing invalidated."""
        return not self.stranded and not self.invalid

    @computed_field  # type: ignore[prop-decorator]
    @property
    def stranded(self) -> list[str]:
        return [i.name for i in self.impact if i.outcome == "stranded"]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def invalid(self) -> int:
        return sum(i.invalid for i in self.impact)

    def describe(self) -> list[str]:
        """The diff as lines for a terminal."""
        lines = [f"schema {self.before or '(none published)'} -> {self.after}"]
        lines += ["  " + c.describe() for c in self.changes] or ["  (no changes)"]
        lines.append(f"impact on live data (state at seq {self.state_seq}):")
        lines += ["  " + i.describe() for i in self.impact] or ["  (none)"]
        if self.safe:
            lines.append("safe: nothing stranded, nothing invalidated")
        else:
            lines.append(
                f"UNSAFE: {len(self.stranded)} stranded, {self.invalid} invalidated"
                + (" (published with --force)" if self.forced else "")
            )
        return lines


# -- the documents ---------------------------------------------------------------------


def diff_documents(before: SchemaDocument | None, after: SchemaDocument) -> list[Change]:
    """Every difference between two documents that changes what a write may do."""
    changes: list[Change] = []
    old_nodes = before.nodes if before else {}
    old_rels = before.relationships if before else {}
    sides: list[tuple[Of, Mapping[str, NodeTypeDoc | RelationshipTypeDoc], Mapping[str, Any]]] = [
        ("label", old_nodes, after.nodes),
        ("relationship_type", old_rels, after.relationships),
    ]
    for of, old, new in sides:
        for name in sorted(old.keys() - new.keys()):
            changes.append(Change(of=of, name=name, kind="removed"))
        for name in sorted(new.keys() - old.keys()):
            changes.append(Change(of=of, name=name, kind="added"))
        for name in sorted(old.keys() & new.keys()):
            changes += _entry_changes(of, name, old[name], new[name])
    if before is not None:
        for setting in _SETTINGS:
            was, now = _plain(getattr(before, setting)), _plain(getattr(after, setting))
            if was != now:
                changes.append(
                    Change(of="schema", name=setting, kind="setting_changed", before=was, after=now)
                )
    return changes


_SETTINGS = (
    "fallback_label",
    "unknown_label_policy",
    "case_insensitive_remap",
    "conflict",
    "half_lives",
)
_POLICIES = ("conflict", "functional", "review_below", "many")  # on entries and properties


def _policies(change: Any, old: Any, new: Any, prop: str | None = None) -> Iterator[Change]:
    """Each conflict/review policy that differs (unset and default read alike)."""
    for policy in _POLICIES:
        was, now = getattr(old, policy, None), getattr(new, policy, None)
        if (was or None) != (now or None):
            yield change("policy_changed", prop, before={policy: was}, after={policy: now})


def _plain(value: Any) -> JsonValue:
    """A setting as JSON (durations as ISO 8601, as the document stores them)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, timedelta):
        return TypeAdapter(timedelta).dump_python(value, mode="json")  # type: ignore[no-any-return]
    return value  # type: ignore[no-any-return]


def _entry_changes(
    of: Of,
    name: str,
    old: NodeTypeDoc | RelationshipTypeDoc,
    new: NodeTypeDoc | RelationshipTypeDoc,
) -> Iterator[Change]:
    def change(kind: ChangeKind, prop: str | None = None, **values: Any) -> Change:
        return Change(of=of, name=name, kind=kind, property=prop, **values)

    for alias in sorted(set(new.remaps_from) - set(old.remaps_from)):
        yield change("remap_added", after=alias)
    for alias in sorted(set(old.remaps_from) - set(new.remaps_from)):
        yield change("remap_removed", before=alias)
    if (
        isinstance(old, NodeTypeDoc)
        and isinstance(new, NodeTypeDoc)
        and old.merge_keys != new.merge_keys
    ):
        yield change("merge_keys_changed", before=old.merge_keys, after=new.merge_keys)
    if isinstance(old, RelationshipTypeDoc) and isinstance(new, RelationshipTypeDoc):
        if old.from_labels != new.from_labels:
            yield change("from_changed", before=old.from_labels, after=new.from_labels)
        if old.to_labels != new.to_labels:
            yield change("to_changed", before=old.to_labels, after=new.to_labels)
    for prop in sorted(set(new.required) - set(old.required)):
        yield change("required_added", prop)
    for prop in sorted(set(old.required) - set(new.required)):
        yield change("required_removed", prop)
    for prop in sorted(new.properties.keys() - old.properties.keys()):
        yield change("property_added", prop)
    for prop in sorted(old.properties.keys() - new.properties.keys()):
        yield change("property_removed", prop)
    for prop in sorted(old.properties.keys() & new.properties.keys()):
        yield from _property_changes(change, prop, old.properties[prop], new.properties[prop])
    if old.additional_properties != new.additional_properties:
        yield change("opened" if new.additional_properties else "closed")
    yield from _policies(change, old, new)


def _property_changes(
    change: Any, prop: str, old: PropertyDoc, new: PropertyDoc
) -> Iterator[Change]:
    if (old.type, old.items) != (new.type, new.items):
        yield change("property_type_changed", prop, before=_type(old), after=_type(new))
    if old.enum != new.enum:
        yield change("enum_changed", prop, before=old.enum, after=new.enum)
    if old.relationship != new.relationship:
        yield change(
            "edge_changed",
            prop,
            before=old.relationship.model_dump() if old.relationship else None,
            after=new.relationship.model_dump() if new.relationship else None,
        )
    yield from _policies(change, old, new, prop)


def _type(spec: PropertyDoc) -> str:
    if spec.type == "array" and spec.items:
        return f"array of {spec.items}"
    return spec.type or "any"


# -- the live data ---------------------------------------------------------------------


def schema_diff(
    conn: Sql,
    state: StateReader,
    before: SchemaDocument | None,
    after: SchemaDocument,
) -> SchemaDiff:
    """The diff from ``before`` (the schema in force) to ``after`` with its impact on the
    state read on ``conn`` (hold one snapshot or the write transaction around the call)."""
    old = Schema(before) if before is not None else None
    new = Schema(after)
    return SchemaDiff(
        before=old.version if old else None,
        after=new.version,
        state_seq=state.checkpoint(conn),
        changes=diff_documents(before, after),
        impact=live_impact(conn, state, old, new),
    )
