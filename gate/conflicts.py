"""Conflicts: a write that would change a fact the graph already holds.

A fact is a single-valued property's value on a node or relationship, or the one
relationship of a *functional* type that starts at a node. Changing one is decided by the
schema's ``conflict`` policy (the property's, else its label's or type's, else the
document's, else ``supersede``):

- ``supersede``: the write wins and the replaced value, with who set it and at what
  confidence, is kept in the event (``Superseded``) — seed 000's overwrite, losing nothing;
- ``keep_higher_confidence``: the write wins only if its computed confidence is at least the
  held fact's (seed 000's comparator), else ``CONFLICT_LOWER_CONFIDENCE``;
- ``reject``: ``CONFLICT``;
- ``review``: the write is held for a reviewer (``gate.review``); once approved, it wins.

Under any policy but ``reject`` and ``review``, a write of lower authority than the held
value's (``gate.authority``: both computed when written, kept in provenance) never supersedes
it: ``AUTHORITY_CONFLICT`` (both authorities in the details), or held for a reviewer where
the schema's ``authority.hold`` lists the label or type. Equal or higher authority, or a
value written while nothing was ranked, is decided as before.

The candidates are only the written node's own properties, or the start node's
relationships of the written type — index probes inside the write transaction, never a
search of the graph. A value written again unchanged is no conflict, nor is a property
declared ``many`` (multi-valued).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from writegate.eventlog import Transaction
from writegate.eventlog.sql import Sql
from writegate.gate import authority
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.schema.authority import Lower
from writegate.gate.schema.document import ConflictPolicy
from writegate.gate.schema.registry import RelationshipEntry, SchemaEntry
from writegate.language import (
    Authority,
    RelationshipDeleted,
    Superseded,
    WriteProvenance,
    draft,
)
from writegate.projections.state import EdgeRow, Fact, NodeRow, StateReader

HeldRow = NodeRow | EdgeRow
# the code of a refusal several conflicts call for: the first of these among them
_PRECEDENCE = [
    ErrorCode.CONFLICT,
    ErrorCode.AUTHORITY_CONFLICT,
    ErrorCode.CONFLICT_LOWER_CONFIDENCE,
]


class Held(Exception):
    """The write changes a fact whose policy is ``review``: it is held, not refused."""

    def __init__(self, reason: str, provenance: WriteProvenance | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.provenance = provenance  # the write's, its authority along its lineage


@dataclass(frozen=True)
class Replacing:
    """A relationship being written, as the functional check needs it."""

    identity: str
    start: str  # the identity of the node it starts at
    type: str
    entry: RelationshipEntry  # its type's: the conflict policy, what lower authority meets
    provenance: WriteProvenance
    request: dict[str, Any]
    hold: bool  # False once a reviewer approved the write: ``review`` then supersedes


def of_properties(
    state: StateReader,
    conn: Sql,
    held: HeldRow | None,
    changes: Mapping[str, Any],
    entry: SchemaEntry | RelationshipEntry,
    incoming: WriteProvenance,
    *,
    hold: bool,
) -> list[Superseded]:
    """The values of ``held`` this write replaces, or the refusal its policies call for."""
    if held is None:
        return []
    specs = entry.properties
    changed = [
        name
        for name, value in changes.items()
        if name in held.properties
        and held.properties[name] != value
        and not (name in specs and specs[name].many)
    ]
    if not changed:
        return []
    facts = state.facts(conn, held.identity, changed)
    decided: list[tuple[ConflictPolicy, Superseded, Any]] = []
    for name in changed:
        spec = specs.get(name)
        policy = spec.conflict if spec is not None and spec.conflict is not None else entry.conflict
        old = superseded_value(held, facts.get(name), name, held.properties[name])
        decided.append((policy, old, changes[name]))
    return _settle(held.identity, decided, incoming, hold, entry.lower_authority)


def end_replaced(
    state: StateReader, tx: Transaction, item: int | None, written: Replacing
) -> list[Superseded]:
    """End the relationships of a functional type that ``written`` replaces (those of its
    type starting where it starts), each with a deletion naming it; or refuse the write as
    the type's policy says."""
    others = [
        edge
        for edge in state.edges_from(tx.conn, written.start, written.type)
        if edge.identity != written.identity
    ]
    policy, lower = written.entry.conflict, written.entry.lower_authority
    decided = [
        (policy, superseded_value(edge, None, None, edge.identity), written.identity)
        for edge in others
    ]
    replaced = (
        _settle(written.identity, decided, written.provenance, written.hold, lower)
        if others
        else []
    )
    for edge in others:
        ended = RelationshipDeleted(
            identity=edge.identity,
            type=edge.type,
            from_identity=edge.from_identity,
            to_identity=edge.to_identity,
            cascade_of=None,
            superseded_by=written.identity,
            batch_item=item,
        )
        tx.emit(
            draft(ended, [ended.stream], provenance=written.provenance, request=written.request)
        )
    return replaced


def superseded_value(held: HeldRow, fact: Fact | None, name: str | None, value: Any) -> Superseded:
    """The held value with who set it: the property's own writer where the read model
    knows it, else the last writer of the node or relationship."""
    seq, agent, provenance = (
        (fact.seq, fact.agent, fact.provenance)
        if fact is not None
        else (held.updated_seq, held.updated_by, held.provenance)
    )
    return Superseded(
        property=name,
        value=value,
        seq=seq,
        agent=agent,
        confidence=provenance.confidence if provenance else None,
        source=provenance.source if provenance else None,
        extraction_method=provenance.extraction_method if provenance else None,
        authority=provenance.authority if provenance else None,
    )


def _settle(
    subject: str,
    decided: list[tuple[ConflictPolicy, Superseded, Any]],
    incoming: WriteProvenance,
    hold: bool,
    lower: Lower,
) -> list[Superseded]:
    refused: list[tuple[ErrorCode, Superseded, Any]] = []
    held = [old for policy, old, _ in decided if policy == "review"]
    if held and hold:
        what = ", ".join(f"{subject}.{o.property}" if o.property else str(o.value) for o in held)
        raise Held(f"it would change {what} (conflict: review)", incoming)
    outranked = [
        old
        for policy, old, _ in decided
        if policy not in ("reject", "review") and authority.below(incoming.authority, old.authority)
    ]
    if outranked and hold and lower == "review":
        first = outranked[0]
        what = f"{subject}.{first.property}" if first.property else str(first.value)
        raise Held(
            f"it would change {what}, held at authority {authority.said(first.authority)}, "
            f"at the lower authority {authority.said(incoming.authority)}",
            incoming,
        )
    for policy, old, value in decided:
        if policy == "reject":
            refused.append((ErrorCode.CONFLICT, old, value))
        elif lower == "refuse" and old in outranked:
            refused.append((ErrorCode.AUTHORITY_CONFLICT, old, value))
        elif policy == "keep_higher_confidence" and incoming.confidence < (old.confidence or 0.0):
            refused.append((ErrorCode.CONFLICT_LOWER_CONFIDENCE, old, value))
    if not refused:
        return [old for _, old, _ in decided]
    code = min((c for c, _, _ in refused), key=_PRECEDENCE.index)
    first = next(old for c, old, _ in refused if c == code)
    what = f"{subject}.{first.property}" if first.property else f"{first.value}"
    reason = {
        ErrorCode.CONFLICT: "the schema refuses to change it (conflict: reject)",
        ErrorCode.AUTHORITY_CONFLICT: f"it is held at authority {authority.said(first.authority)}"
        f" and this write's authority is {authority.said(incoming.authority)}, lower",
        ErrorCode.CONFLICT_LOWER_CONFIDENCE: f"this write's confidence "
        f"{incoming.confidence:g} is lower (conflict: keep_higher_confidence)",
    }[code]
    return _refuse(
        code,
        f"{what} is held at confidence {_number(first.confidence)} ({first.source}, "
        f"{first.extraction_method}, by {first.agent} at seq {first.seq}); {reason}"
        + (f"; and {len(refused) - 1} more" if len(refused) > 1 else ""),
        subject,
        refused,
        incoming,
    )


def _refuse(
    code: ErrorCode,
    message: str,
    subject: str,
    refused: list[tuple[ErrorCode, Superseded, Any]],
    incoming: WriteProvenance,
) -> list[Superseded]:
    raise GateRejection(
        code,
        message,
        {
            "subject": subject,
            "conflicts": [
                {
                    "property": old.property,
                    "existing": old.model_dump(mode="json", exclude={"property"}),
                    "incoming": {
                        "value": value,
                        "confidence": incoming.confidence,
                        "source": incoming.source,
                        "extraction_method": incoming.extraction_method,
                        **_ranked(incoming.authority),
                    },
                    "policy_error": error.value,
                }
                for error, old, value in refused
            ],
        },
    )


def _ranked(held: Authority | None) -> dict[str, Any]:
    """The incoming write's authority for a refusal's details (none while nothing ranks)."""
    return {} if held is None else {"authority": held.model_dump(mode="json")}


def _number(value: float | None) -> str:
    return "unknown" if value is None else f"{value:g}"
