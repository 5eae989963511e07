"""A write that lands on a node the graph holds while naming, by what identifies it, another.

Merge keys say which node a write means; a label's ``identity`` properties and its vetoing
``evidence`` fields say which *thing* it means. When the two disagree — ``Person:name=john
smith`` with another social security number, another date of birth — the write names a
possibly different entity, and superseding the held value would make two things one without
a word. Such a write is refused with ``IDENTITY_CONFLICT`` naming the node and the values, or
held for a reviewer where the label has a review lane; the writer who knows it is the same
thing (a corrected number) says ``resolution: same``.

The same test keeps entity resolution's ``auto`` from landing a write on a candidate whose
identity disagrees (``gate.resolution.matching``). A missing value is not a disagreement;
a near miss is one where it is a character or a digit apart (``_CODES``: a correction or a
sibling model, the writer says which), not where it is a spelling or within a tolerance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from writegate.gate.conflicts import Held
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.resolution.evidence import compare, raw_value
from writegate.gate.schema.document import ResolutionDoc
from writegate.gate.schema.registry import SchemaEntry
from writegate.language import clear_identity
from writegate.projections.state import NodeRow


class Dispute(BaseModel):
    """One identifying field whose written value names another thing than the held one."""

    model_config = ConfigDict(frozen=True)

    field: str
    kind: Literal["identity", "evidence"]
    held: Any
    written: Any


def disputes(
    rules: ResolutionDoc, held: Mapping[str, Any], written: Mapping[str, Any]
) -> list[Dispute]:
    """The identity properties (case ignored) and vetoing evidence fields on which ``written``
    disagrees with ``held``: both set, and not equal, nor (evidence) a near miss."""
    found = [
        Dispute(field=prop, kind="identity", held=held[prop], written=written[prop])
        for prop in rules.identity
        if held.get(prop) is not None
        and written.get(prop) is not None
        and str(held[prop]).casefold() != str(written[prop]).casefold()
    ]
    for prop, doc in sorted((rules.evidence or {}).items()):
        if not doc.veto or not any(p in written for p in doc.properties_of(prop)):
            continue
        theirs, mine = raw_value(prop, doc, held), raw_value(prop, doc, {**held, **written})
        outcome = compare(doc, mine, theirs)
        if outcome == "disagree" or (outcome == "near" and doc.compare in _CODES):
            found.append(Dispute(field=prop, kind="evidence", held=theirs, written=mine))
    return found


_CODES = ("exact", "date")
"""Kinds whose near miss is a character or a digit apart: a typo, or a sibling (ACL100 and
ACL200, namesakes born a digit apart), so it is disputed too; a spelling of a place or a
number within its tolerance is not."""


def check_landing(
    entry: SchemaEntry,
    row: NodeRow,
    written: Mapping[str, Any],
    hold: bool,
    alternatives: Callable[[], list[dict[str, Any]]] = list,
) -> None:
    """Refuse (or, with a review lane and ``hold``, hold) a write to the held node ``row``
    whose identifying fields disagree with it; nothing for a label that does not resolve,
    nor for a write a reviewer approved (``hold`` False: they said it is this one). The
    refusal names the other nodes the write may mean (``alternatives``: the candidates its
    name and values would be proposed), so the writer can name the right one."""
    rules = entry.resolution
    if rules is None or not hold:
        return
    found = disputes(rules, row.properties, written)
    if not found:
        return
    said = "; ".join(f"{d.field} {d.held!r} held, {d.written!r} written" for d in found)
    keys = row.keys
    node = clear_identity(entry.label, dict(keys))
    if _review_lane(entry, found):
        raise Held(f"it names {node} but another {found[0].field} ({said})")
    others = alternatives()
    maybe = [f"; it may be {clear_identity(o['label'], o['merge_keys'])}" for o in others[:1]]
    raise GateRejection(
        ErrorCode.IDENTITY_CONFLICT,
        f"{node} holds another {', '.join(d.field for d in found)} ({said}): this is probably "
        f"another thing of the same name{''.join(maybe)}; name it by other keys, or "
        "send resolution: same if it is this one",
        {
            "label": entry.label,
            "merge_keys": dict(keys),
            "disputes": [d.model_dump(mode="json") for d in found],
            "candidates": others,
        },
    )


def _review_lane(entry: SchemaEntry, found: list[Dispute]) -> bool:
    """Whether the label holds writes for a reviewer: a floor, a rule, or ``review`` as the
    policy of a disputed field."""
    if entry.review_below is not None or entry.review_rules:
        return True
    policies = [
        (spec.conflict if (spec := entry.properties.get(d.field)) else None) or entry.conflict
        for d in found
    ]
    return "review" in policies
