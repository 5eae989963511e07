"""The impact of a schema change on live data: what it strands, what it invalidates.

Read from the state model on the connection given (one snapshot, or the publish's write
transaction). Each changed label's nodes (each changed type's relationships) are checked
against the old and the new declaration with the gate's own checks; those valid now and not
after are counted by the error code a write of them would get. A dropped label or type that
still has live data is *stranded* — later writes to its name become the fallback label, or
are refused — unless the new schema remaps the name (*merged*: its writes go there, and
``rebuild --regate`` projects the old items there too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from writegate.eventlog.sql import Sql
from writegate.gate.checks import check_keys, check_properties, missing_required
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.schema.registry import RelationshipEntry, Schema, SchemaEntry
from writegate.projections.state import EndedEdge, NodeRow, StateReader

_FROZEN = ConfigDict(frozen=True)


class Violation(BaseModel):
    """Live items a change would invalidate, for one reason: the code a write would get."""

    model_config = _FROZEN

    error_code: ErrorCode
    subject: str  # the property, merge key or endpoint concerned
    count: int
    example: str  # one identity
    message: str  # the gate's message for it


class Impact(BaseModel):
    """What a change does to one label's nodes (or one type's relationships)."""

    model_config = _FROZEN

    of: Literal["label", "relationship_type"]
    name: str
    live: int
    outcome: Literal["stranded", "merged", "checked", "held", "duplicates"]
    writes_go_to: str | None = None  # stranded/merged: where later writes of the name go
    invalid: int = 0  # valid now, invalid after
    violations: list[Violation] = []
    # held: items whose last write a new review rule covers; duplicates: nodes with a
    # probable duplicate under a new resolution policy (``gate.schema.caught``)
    caught: int = 0
    sampled: int | None = None  # caught among this many (an even sample), not among all
    example: str | None = None  # one of them
    why: str | None = None  # what catches them, after the verb ("last written as …")

    def describe(self) -> str:
        what = ("node" if self.of == "label" else "relationship") + ("" if self.live == 1 else "s")
        if self.outcome == "stranded":
            later = (
                f"later writes to {self.name} become {self.writes_go_to}"
                if self.writes_go_to
                else f"later writes to {self.name} are refused"
            )
            return f"{self.name}: {self.live} {what} stranded ({later})"
        if self.outcome == "merged":
            return (
                f"{self.name}: {self.live} {what} stay under {self.name}; later writes go to "
                f"{self.writes_go_to} (`rebuild --regate` projects them there)"
            )
        if self.outcome in ("held", "duplicates"):
            example = f"; e.g. {self.example}" if self.example else ""
            verb = {"held": ("was", "were"), "duplicates": ("has", "have")}[self.outcome]
            among = f"{self.sampled} {what} sampled from {self.live}" if self.sampled else ""
            among = among or f"{self.live} {what}"
            said = f"{self.caught} of {among} {verb[self.caught != 1]} {self.why}"
            return f"{self.name}: {said}{example}"
        if not self.invalid:
            return f"{self.name}: {self.live} {what} checked, all still valid"
        reasons = ", ".join(
            f"{v.count} {v.error_code} {v.subject} (e.g. {v.example})" for v in self.violations
        )
        return (
            f"{self.name}: {self.invalid} of {self.live} {what} would no longer validate: {reasons}"
        )


def live_impact(conn: Sql, state: StateReader, old: Schema | None, new: Schema) -> list[Impact]:
    """Each label and type with live data that the change from ``old`` to ``new`` touches
    (``old`` None: nothing was declared, so every item counts as valid until now)."""
    counts = state.counts(conn)
    impact: list[Impact] = []
    for label, live in counts.labels.items():
        if (found := _label_impact(conn, state, old, new, label, live)) is not None:
            impact.append(found)
    for rtype, live in counts.relationship_types.items():
        if (found := _type_impact(conn, state, old, new, rtype, live)) is not None:
            impact.append(found)
    return impact


def _label_impact(
    conn: Sql,
    state: StateReader,
    old: Schema | None,
    new: Schema,
    label: str,
    live: int,
) -> Impact | None:
    was = old.get_entry(label) if old else None
    now = new.get_entry(label)
    if now is None:
        if old is not None and was is None:
            return None  # stranded before this change: not its doing
        if (target := new.remap_target(label)) is not None:
            return Impact(of="label", name=label, live=live, outcome="merged", writes_go_to=target)
        fallback = new.fallback_label() if new.unknown_label_policy == "remap" else None
        return Impact(of="label", name=label, live=live, outcome="stranded", writes_go_to=fallback)
    if old is not None and (was is None or _same(old, new, "nodes", label)):
        return None
    found = (
        (row.identity, problems)
        for row in state.nodes_labelled(conn, label)
        if (problems := _node_problems(row, now)) and not _node_problems(row, was)
    )
    return _checked("label", label, live, found)


def _type_impact(
    conn: Sql,
    state: StateReader,
    old: Schema | None,
    new: Schema,
    rtype: str,
    live: int,
) -> Impact | None:
    was = old.get_relationship_type(rtype) if old else None
    now = new.get_relationship_type(rtype)
    kind: Literal["relationship_type"] = "relationship_type"
    if now is None:
        if old is not None and was is None:
            return None
        target = new.relationship_remap_target(rtype)
        outcome: Literal["merged", "stranded"] = "merged" if target else "stranded"
        return Impact(of=kind, name=rtype, live=live, outcome=outcome, writes_go_to=target)
    if old is not None and (was is None or _same(old, new, "relationships", rtype)):
        return None
    found = (
        (row.edge.identity, problems)
        for row in state.edges_typed(conn, rtype)
        if (problems := _edge_problems(row, now)) and not _edge_problems(row, was)
    )
    return _checked(kind, rtype, live, found)


def _same(old: Schema, new: Schema, kind: str, name: str) -> bool:
    """Whether an entry's declaration is unchanged (its live data need not be read)."""
    return bool(getattr(old.document, kind)[name] == getattr(new.document, kind)[name])


def _checked(
    of: Literal["label", "relationship_type"],
    name: str,
    live: int,
    found: Iterable[tuple[str, list[GateRejection]]],
) -> Impact:
    """The newly invalid items and their problems, grouped by code and subject, with one
    example of each."""
    groups: dict[tuple[ErrorCode, str], Violation] = {}
    invalid = 0
    for identity, problems in found:
        invalid += 1
        for problem in problems:
            key = (problem.code, _subject(problem))
            seen = groups.get(key)
            groups[key] = (
                seen.model_copy(update={"count": seen.count + 1})
                if seen is not None
                else Violation(
                    error_code=problem.code,
                    subject=key[1],
                    count=1,
                    example=identity,
                    message=problem.message,
                )
            )
    return Impact(
        of=of,
        name=name,
        live=live,
        outcome="checked",
        invalid=invalid,
        violations=list(groups.values()),
    )


def _subject(problem: GateRejection) -> str:
    details = problem.details
    for name in ("missing", "unknown"):
        if isinstance(details.get(name), list):
            return ", ".join(map(str, details[name]))
    if "field" in details:
        return str(details["field"]).removeprefix("properties.")
    if "end" in details:
        return f"{details['end']} {details.get('label')}"
    return "merge_keys" if problem.code == ErrorCode.SCHEMA_MERGE_KEY_MISMATCH else ""


def _attempt(check: Callable[..., object], *args: Any) -> list[GateRejection]:
    try:
        check(*args)
    except GateRejection as problem:
        return [problem]
    return []


def _node_problems(row: NodeRow, entry: SchemaEntry | None) -> list[GateRejection]:
    """Everything a write of this node as it stands would be refused for under ``entry``
    (None: nothing declared, as before the first schema, so nothing to refuse)."""
    if entry is None:
        return []
    problems = _attempt(check_keys, row.keys, entry, "merge_keys")
    for name, value in row.properties.items():
        if name not in row.keys:  # a write carries its keys apart from its properties
            problems += _attempt(
                check_properties,
                {name: value},
                entry.properties,
                entry.additional_properties,
                entry.label,
            )
    required = [*entry.merge_keys, *entry.required_properties]
    if not row.stub and (missing := missing_required(required, row.keys, {}, row.properties)):
        problems.append(_missing(row.identity, missing))
    return problems


def _edge_problems(row: EndedEdge, entry: RelationshipEntry | None) -> list[GateRejection]:
    if entry is None:
        return []
    edge, problems = row.edge, []
    for name, value in edge.properties.items():
        problems += _attempt(
            check_properties,
            {name: value},
            entry.properties,
            entry.additional_properties,
            entry.type,
        )
    if missing := missing_required(entry.required_properties, {}, {}, edge.properties):
        problems.append(_missing(edge.identity, missing))
    for end, label, allowed in (
        ("from", row.from_label, entry.from_labels),
        ("to", row.to_label, entry.to_labels),
    ):
        if allowed and label is not None and label not in allowed:
            problems.append(
                GateRejection(
                    ErrorCode.SCHEMA_ENDPOINT_LABEL_NOT_ALLOWED,
                    f"{entry.type} may not {'start' if end == 'from' else 'end'} at {label}",
                    {"end": end, "label": label},
                )
            )
    return problems


def _missing(identity: str, missing: list[str]) -> GateRejection:
    return GateRejection(
        ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY,
        f"{identity} lacks required {missing}",
        {"missing": missing},
    )
