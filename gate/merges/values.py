"""Which value a merged node or relationship keeps where both sides hold one.

A merge applies each property's conflict policy as if both nodes' writes had landed on one
node (``gate.merges.plan``):

- ``supersede``: the later-written value (by log position) wins;
- ``keep_higher_confidence`` (and ``review``: a merge is itself a reviewer's act): the
  value written at the higher confidence wins, the survivor's on a tie;
- ``reject``: the merge is refused with ``CONFLICT`` naming both values;
- but for ``reject``, where the schema ranks authority (``gate.authority``) and the two
  values were written at different authorities, the one of higher authority wins.

Many-valued properties take the union. The facts (who set each value) travel with the
values, so an unmerge can restore them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from writegate.eventlog.sql import Sql
from writegate.gate.conflicts import superseded_value
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.schema.registry import RelationshipEntry, SchemaEntry
from writegate.language import FactRecord, Superseded
from writegate.projections.state import EdgeRow, Fact, NodeRow, StateReader

Entry = SchemaEntry | RelationshipEntry


@dataclass
class Combined:
    """The values one side takes from the other, and what they replace."""

    set: dict[str, Any] = field(default_factory=dict)
    replaced: dict[str, Any] = field(default_factory=dict)  # None: was absent
    superseded: list[Superseded] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the survivor's value stayed


def combine(
    state: StateReader,
    conn: Sql,
    held: NodeRow | EdgeRow,
    incoming: Mapping[str, Any],
    incoming_identity: str,
    entry: Entry | None,
    skip: frozenset[str] = frozenset(),
) -> Combined:
    """What ``held`` takes of ``incoming``'s values, by each property's conflict policy."""
    out = Combined()
    differing = [
        name
        for name, value in incoming.items()
        if name not in skip and name in held.properties and held.properties[name] != value
    ]
    mine = state.facts(conn, held.identity, differing)
    theirs = state.facts(conn, incoming_identity, differing)
    refused: list[dict[str, Any]] = []
    for name, value in incoming.items():
        if name in skip or held.properties.get(name) == value:
            continue
        if name not in held.properties:
            out.set[name], out.replaced[name] = value, None
            continue
        old = held.properties[name]
        spec = entry.properties.get(name) if entry is not None else None
        if spec is not None and spec.many and isinstance(old, list) and isinstance(value, list):
            out.set[name] = old + [v for v in value if v not in old]
            out.replaced[name] = old
            continue
        policy = (spec.conflict if spec is not None else None) or (
            entry.conflict if entry is not None else "supersede"
        )
        ours, other = mine.get(name), theirs.get(name)
        if policy == "reject":
            refused.append({"property": name, "survivor": old, "duplicate": value})
            continue
        outranks = _outranks(other, ours)
        if outranks is not None:  # the value of higher authority wins (``gate.authority``)
            wins = outranks
        elif policy == "supersede":
            wins = (other.seq if other else 0) > (ours.seq if ours else held.updated_seq)
        else:  # keep_higher_confidence, review
            wins = _confidence(other) > _confidence(ours)
        if wins:
            out.set[name], out.replaced[name] = value, old
            out.superseded.append(superseded_value(held, ours, name, old))
        else:
            out.kept.append(name)
    if refused:
        raise GateRejection(
            ErrorCode.CONFLICT,
            f"{held.identity} and {incoming_identity} hold different values of "
            f"{', '.join(r['property'] for r in refused)} and the schema refuses to choose "
            "(conflict: reject); make them agree first",
            {"subject": held.identity, "conflicts": refused},
        )
    return out


def _outranks(other: Fact | None, ours: Fact | None) -> bool | None:
    """Whether the duplicate's value outranks the survivor's (None: as high, or unranked)."""
    theirs, mine = (f.provenance.authority if f and f.provenance else None for f in (other, ours))
    if theirs is None or mine is None or theirs.rank == mine.rank:
        return None
    return theirs.rank > mine.rank


def _confidence(fact: Any) -> float:
    return fact.provenance.confidence if fact is not None and fact.provenance else 0.0


def before(facts: list[FactRecord], replaced: Mapping[str, Any]) -> list[FactRecord]:
    """Who had set the values a merge replaces (an unmerge restores them)."""
    return [f for f in facts if replaced.get(f.property) is not None]


def moved_fact(fact: FactRecord, identity: str) -> FactRecord:
    return fact.model_copy(update={"identity": identity})


def edge_holding(
    new: str, edge: EdgeRow, start: str, end: str, current: dict[str, Any], held: EdgeRow | None
) -> EdgeRow:
    """The relationship ``new`` as the merge has made it so far (a row to combine into)."""
    if held is not None and held.properties == current:
        return held
    base = held or edge
    return EdgeRow(
        new,
        edge.type,
        start,
        end,
        current,
        base.provenance,
        base.version,
        None,
        base.updated_seq,
        base.updated_at,
        base.updated_by,
    )
