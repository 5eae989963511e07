"""Every difference between two schema documents, field by field of the document model.

The walk follows the models' own fields (``model_fields``), not a list kept beside them:
each field has its way of being compared and worded in ``FIELDS``; a field without one —
added to the schema language later — is still reported (``changed``, with both values), and
a test holds ``FIELDS`` to the models so that it gets wording of its own. So a key of the
schema language cannot change what a write does and be missing from ``schema diff``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, JsonValue, TypeAdapter

from writegate.gate.limits import Limits
from writegate.gate.schema.authority import AuthorityDoc
from writegate.gate.schema.changes import Change, ChangeKind, Of
from writegate.gate.schema.document import (
    EvidenceDoc,
    NodeTypeDoc,
    PropertyDoc,
    RelationshipRef,
    RelationshipTypeDoc,
    ResolutionDoc,
    ReviewRule,
    SchemaDocument,
)


@dataclass(frozen=True)
class Where:
    """What a field belongs to: ``of`` the schema, a label or a type, and which property."""

    of: Of
    name: str = ""
    property: str | None = None

    def change(self, kind: ChangeKind, **values: Any) -> Change:
        return Change(of=self.of, name=self.name, kind=kind, property=self.property, **values)


Compare = Callable[[Where, str, Any, Any], Iterator[Change]]


def diff_documents(before: SchemaDocument | None, after: SchemaDocument) -> list[Change]:
    """Every difference between two documents, each field of the model compared its way
    (``before`` None: nothing was published, so every label, type, rule and group is new)."""
    if before is None:
        empty, top = SchemaDocument(nodes={}), Where("schema")
        return [
            change
            for f in ("nodes", "relationships", "review_rules", "identity_groups")
            for change in FIELDS[SchemaDocument, f](top, f, getattr(empty, f), getattr(after, f))
        ]
    return list(_fields(Where("schema"), before, after))


def _fields(where: Where, old: BaseModel, new: BaseModel) -> Iterator[Change]:
    """Each field of two instances of one model, compared as ``FIELDS`` says (a field it
    does not know as ``changed``)."""
    for field in type(new).model_fields:
        compare = FIELDS.get((type(new), field), _changed)
        yield from compare(where, field, getattr(old, field), getattr(new, field))


def _plain(value: Any) -> JsonValue:
    """A value as JSON (durations as ISO 8601, as the document stores them)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, timedelta):
        return TypeAdapter(timedelta).dump_python(value, mode="json")  # type: ignore[no-any-return]
    return value  # type: ignore[no-any-return]


def _changed(where: Where, field: str, old: Any, new: Any) -> Iterator[Change]:
    if _plain(old) != _plain(new):
        named = replace(where, name=field) if where.of == "schema" else where
        yield named.change("changed", before={field: _plain(old)}, after={field: _plain(new)})


def _setting(where: Where, field: str, old: Any, new: Any) -> Iterator[Change]:
    if _plain(old) != _plain(new):
        name = f"{where.name}.{field}" if where.name else field
        yield Where("schema", name).change("setting_changed", before=_plain(old), after=_plain(new))


def _policy(where: Where, field: str, old: Any, new: Any) -> Iterator[Change]:
    """A conflict/review policy (unset and default read alike)."""
    if (old or None) != (new or None):
        yield where.change("policy_changed", before={field: old}, after={field: new})


def _retention(where: Where, field: str, old: Any, new: Any) -> Iterator[Change]:
    """A property's retention period: how long its superseded values are kept."""
    if _plain(old) != _plain(new):
        yield where.change(
            "policy_changed", before={field: _plain(old)}, after={field: _plain(new)}
        )


def _whole(kind: ChangeKind) -> Compare:
    def compare(where: Where, field: str, old: Any, new: Any) -> Iterator[Change]:
        if _plain(old) != _plain(new):
            yield where.change(kind, before=_plain(old), after=_plain(new))

    return compare


def _members(added: ChangeKind, removed: ChangeKind, *, per_property: bool) -> Compare:
    """A list read as a set: each member added or removed is one change."""

    def compare(where: Where, field: str, old: Any, new: Any) -> Iterator[Change]:
        for kind, members, value in (
            (added, set(new) - set(old), "after"),
            (removed, set(old) - set(new), "before"),
        ):
            for member in sorted(members):
                if per_property:
                    yield replace(where, property=member).change(kind)
                else:
                    yield where.change(kind, **{value: member})

    return compare


def _entries(of: Of) -> Compare:
    """Labels or relationship types: removed, added, then those in both, field by field."""

    def compare(
        where: Where, field: str, old: Mapping[str, Any], new: Mapping[str, Any]
    ) -> Iterator[Change]:
        for kind, names in (
            ("removed", old.keys() - new.keys()),
            ("added", new.keys() - old.keys()),
        ):
            for name in sorted(names):
                yield Where(of, name).change(kind)  # type: ignore[arg-type]
        for name in sorted(old.keys() & new.keys()):
            yield from _fields(Where(of, name), old[name], new[name])

    return compare


def _properties(
    where: Where, field: str, old: Mapping[str, PropertyDoc], new: Mapping[str, PropertyDoc]
) -> Iterator[Change]:
    for kind, names in (
        ("property_added", new.keys() - old.keys()),
        ("property_removed", old.keys() - new.keys()),
    ):
        for name in sorted(names):
            yield replace(where, property=name).change(kind)  # type: ignore[arg-type]
    for name in sorted(old.keys() & new.keys()):
        yield from _fields(replace(where, property=name), old[name], new[name])


def _openness(where: Where, field: str, old: bool, new: bool) -> Iterator[Change]:
    if old != new:
        yield where.change("opened" if new else "closed")


def _type(where: Where, field: str, old: str | None, new: str | None) -> Iterator[Change]:
    """A property's type (``type``), or the type of an array's items (``items``)."""
    if old != new:
        prefix = "items of " if field == "items" else ""
        before, after = prefix + (old or "any"), prefix + (new or "any")
        yield where.change("property_type_changed", before=before, after=after)


def _enum(where: Where, field: str, old: Any, new: Any) -> Iterator[Change]:
    if old != new:
        yield where.change("enum_changed", before=old, after=new)


def _description(where: Where, field: str, old: str, new: str) -> Iterator[Change]:
    if old != new:
        named = Where("schema", field) if where.of == "schema" and not where.name else where
        yield named.change("description_changed", before=old, after=new)


def _resolution(
    where: Where, field: str, old: ResolutionDoc | None, new: ResolutionDoc | None
) -> Iterator[Change]:
    """The policy's fields that differ (all of them when it is turned on or off)."""
    was = old.model_dump(mode="json") if old is not None else {}
    now = new.model_dump(mode="json") if new is not None else {}
    differ = [k for k in ResolutionDoc.model_fields if was.get(k) != now.get(k)]
    if differ:
        yield where.change(
            "resolution_changed",
            before={k: was.get(k) for k in differ} if old is not None else None,
            after={k: now.get(k) for k in differ} if new is not None else None,
        )


def _review_rules(
    where: Where, field: str, old: list[ReviewRule] | None, new: list[ReviewRule] | None
) -> Iterator[Change]:
    was, now = [_plain(r) for r in old or []], [_plain(r) for r in new or []]
    for rule in was:
        if rule not in now:
            yield Where("schema", "review rules").change("review_rule_removed", before=rule)
    for rule in now:
        if rule not in was:
            yield Where("schema", "review rules").change("review_rule_added", after=rule)


def _identity_groups(
    where: Where, field: str, old: dict[str, list[str]] | None, new: dict[str, list[str]] | None
) -> Iterator[Change]:
    was, now = old or {}, new or {}
    for group in sorted(was.keys() | now.keys()):
        if sorted(was.get(group, [])) != sorted(now.get(group, [])):
            yield Where("schema", f"identity group {group}").change(
                "identity_group_changed", before=was.get(group), after=now.get(group)
            )


def _limits(where: Where, field: str, old: Limits | None, new: Limits | None) -> Iterator[Change]:
    """Each bound, against the gate's defaults when the document sets none."""
    defaults = Limits()
    yield from _fields(Where("schema", "limits"), old or defaults, new or defaults)


FIELDS: dict[tuple[type[BaseModel], str], Compare] = {
    **{
        (SchemaDocument, f): _setting
        for f in (
            "name",
            "unknown_label_policy",
            "fallback_label",
            "case_insensitive_remap",
            "conflict",
            "half_lives",
            "personal_observations",
            "observation_retention",
            "authority",
        )
    },
    (SchemaDocument, "description"): _description,
    (SchemaDocument, "nodes"): _entries("label"),
    (SchemaDocument, "relationships"): _entries("relationship_type"),
    (SchemaDocument, "limits"): _limits,
    (SchemaDocument, "review_rules"): _review_rules,
    (SchemaDocument, "identity_groups"): _identity_groups,
    **{(Limits, f): _setting for f in Limits.model_fields},
    **{
        (model, f): compare
        for model in (NodeTypeDoc, RelationshipTypeDoc)
        for f, compare in (
            ("description", _description),
            ("required", _members("required_added", "required_removed", per_property=True)),
            ("remaps_from", _members("remap_added", "remap_removed", per_property=False)),
            ("properties", _properties),
            ("additional_properties", _openness),
            ("conflict", _policy),
            ("review_below", _policy),
            ("self_review", _policy),
        )
    },
    (NodeTypeDoc, "merge_keys"): _whole("merge_keys_changed"),
    (NodeTypeDoc, "resolution"): _resolution,
    (NodeTypeDoc, "scope"): _whole("scope_changed"),
    (NodeTypeDoc, "scopes"): _whole("scope_changed"),
    (NodeTypeDoc, "personal"): _whole("personal_changed"),
    (RelationshipTypeDoc, "from_labels"): _whole("from_changed"),
    (RelationshipTypeDoc, "to_labels"): _whole("to_changed"),
    (RelationshipTypeDoc, "functional"): _policy,
    (PropertyDoc, "type"): _type,
    (PropertyDoc, "items"): _type,
    (PropertyDoc, "enum"): _enum,
    (PropertyDoc, "description"): _description,
    (PropertyDoc, "relationship"): _whole("edge_changed"),
    (PropertyDoc, "conflict"): _policy,
    (PropertyDoc, "many"): _policy,
    (PropertyDoc, "personal"): _whole("personal_changed"),
    (PropertyDoc, "retention"): _retention,
    (PropertyDoc, "searchable"): _whole("searchable_changed"),
}
"""How each field of the schema language is compared. Models compared whole (a review
rule, a resolution policy, a relationship property's edge, the authority ranks) are in
``WHOLE``."""

WHOLE: tuple[type[BaseModel], ...] = (
    ReviewRule,
    ResolutionDoc,
    EvidenceDoc,
    RelationshipRef,
    AuthorityDoc,
)
