"""What one difference between two schema documents is, and how a person reads it.

``gate.schema.comparing`` finds them; each kind has its wording here, so ``schema diff``,
``schema publish`` and an unsafe publish's refusal say a change the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

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
    "setting_changed",  # fallback_label, unknown_label_policy, limits.…, half_lives …
    "policy_changed",  # conflict, functional, many, review_below: what a change of a fact does
    "resolution_changed",  # how a creating write looks for the node it may duplicate
    "review_rule_added",  # writes held for a reviewer by who sent them and how
    "review_rule_removed",
    "identity_group_changed",
    "scope_changed",  # where a label's new nodes go, or the scopes a write may choose
    "personal_changed",  # whether a label's nodes, or a property's values, are sealed
    "searchable_changed",  # whether a property's values are in the text index
    "description_changed",  # no write changes; said, so a new version is never "no change"
    "changed",  # a field without wording of its own (see the module docstring)
]


class Change(BaseModel):
    """One difference: ``of`` a label, a relationship type or the schema's settings."""

    model_config = ConfigDict(frozen=True)

    of: Of
    name: str
    kind: ChangeKind
    property: str | None = None
    before: JsonValue = None
    after: JsonValue = None

    def describe(self) -> str:
        subject = {"label": "label ", "relationship_type": "type ", "schema": ""}[self.of]
        subject += self.name + (f".{self.property}" if self.property else "")
        sign = {"added": "+", "removed": "-", "review_rule_added": "+"}.get(self.kind, "~")
        sign = "-" if self.kind == "review_rule_removed" else sign
        return f"{sign} {subject}: {_WORDING[self.kind](self.before, self.after)}"


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
    if not dropped and not added:
        return "enum reordered"
    parts = [*([f"drops {_text(dropped)}"] if dropped else [])]
    return "enum " + ", ".join([*parts, *([f"adds {_text(added)}"] if added else [])])


def rule_text(rule: JsonValue) -> str:
    """A review rule as a sentence: what it holds, where, and for how long."""
    fields = rule if isinstance(rule, dict) else {}
    methods, labels = fields.get("extraction_methods") or [], fields.get("labels") or []
    until = fields.get("until_approved") or 0
    what = f"{_text(methods)} writes" if methods else "every write"
    where = f" to {_text(labels)}" if labels else ", whatever its label or type"
    when = f", from an agent until {until} of its writes are approved" if until else ", always"
    return f"holds {what}{where}{when}"


def _resolution(before: JsonValue, after: JsonValue) -> str:
    """A resolution policy turned on or off, or the fields of it that changed."""
    if not isinstance(before, dict):
        return f"resolution turned on ({_text(after)})"
    if not isinstance(after, dict):
        return f"resolution turned off (it was {_text(before)})"
    return "resolution " + "; ".join(
        f"{k} {_text(before.get(k))} -> {_text(after.get(k))}" for k in after
    )


def _span(word: str) -> Callable[[JsonValue, JsonValue], str]:
    return lambda b, a: f"{word} {_text(b, 'any label')} -> {_text(a, 'any label')}"


_WORDING: dict[str, Callable[[JsonValue, JsonValue], str]] = {
    "added": lambda b, a: "added",
    "removed": lambda b, a: "removed",
    "remap_added": lambda b, a: f"now remaps {_text(a)}",
    "remap_removed": lambda b, a: f"no longer remaps {_text(b)}",
    "merge_keys_changed": lambda b, a: f"merge keys {_text(b)} -> {_text(a)}",
    "required_added": lambda b, a: "now required",
    "required_removed": lambda b, a: "no longer required",
    "property_added": lambda b, a: "declared",
    "property_removed": lambda b, a: "no longer declared",
    "property_type_changed": lambda b, a: f"type {_text(b)} -> {_text(a)}",
    "enum_changed": _enum_change,
    "edge_changed": lambda b, a: f"edge {_text(b)} -> {_text(a)}",
    "closed": lambda b, a: "undeclared properties no longer allowed",
    "opened": lambda b, a: "undeclared properties now allowed",
    "from_changed": _span("may start at"),
    "to_changed": _span("may end at"),
    "setting_changed": lambda b, a: f"{_text(b)} -> {_text(a)}",
    "policy_changed": lambda b, a: f"{_text(b)} -> {_text(a)}",
    "resolution_changed": _resolution,
    "review_rule_added": lambda b, a: "new rule " + rule_text(a),
    "review_rule_removed": lambda b, a: "rule removed that " + rule_text(b),
    "identity_group_changed": lambda b, a: f"labels {_text(b)} -> {_text(a)}",
    "scope_changed": lambda b, a: (
        f"scope {_text(b, 'default')} -> {_text(a, 'default')} (nodes there stay where they are)"
    ),
    "personal_changed": lambda b, a: (
        ("now personal" if a else "no longer personal")
        + " (values written before stay as written: a label's nodes keep their identity)"
    ),
    "searchable_changed": lambda b, a: (
        ("now searched" if a else "no longer searched")
        + ": the live nodes' text is made again as the schema is published"
    ),
    "description_changed": lambda b, a: "description changed (no write changes)",
    "changed": lambda b, a: f"{_text(b)} -> {_text(a)}",
}
