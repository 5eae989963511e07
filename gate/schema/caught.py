"""What a new review rule, review floor or resolution policy would have caught in the data
already written.

None makes live data invalid, so none is a strand or a violation; but an operator
publishing one should see its reach before the first write meets it:

- a review rule holds writes by who sent them and how: the live nodes and relationships whose
  last write it covers (its extraction method, its label or type, an agent with fewer
  approved writes than it asks) are those it would have held for a reviewer; so are those
  last written with a confidence below a label's or type's new (or raised) review floor;
- a resolution policy turned on or changed looks for duplicates: the live nodes of its label
  with a probable duplicate among the others — found as a write finds them (the name's
  blocking probes, at most ``WINDOW`` rows a range, scored against the policy's
  thresholds) — are those it would have proposed, or under ``auto`` landed on the other;
  for a label of more than ``SCORED`` nodes, among an even sample of them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from typing import Literal

from writegate.eventlog.sql import Sql
from writegate.gate.resolution.keys import keys_of, probes_of
from writegate.gate.resolution.matching import WINDOW, name_of, name_rules, normal_name
from writegate.gate.resolution.normalize import NormalizedName
from writegate.gate.resolution.score import Thresholds, Verdict, decide, score_normalized
from writegate.gate.schema.changes import rule_text
from writegate.gate.schema.document import ResolutionDoc, ReviewRule, SchemaDocument
from writegate.gate.schema.impact import Impact
from writegate.language import WriteProvenance
from writegate.projections.state import NodeRow, StateReader

SCORED = 5_000
"""Nodes of a label scored against the others for a new resolution policy's reach: a larger
label is sampled evenly in identity order (scoring is most of a publish's work there: 4.6 of
6.2 s at 10k nodes, measured), and its count says so."""

Of = Literal["label", "relationship_type"]
Written = tuple[str, WriteProvenance | None, str]  # identity, its last write's provenance, agent


def caught_impact(
    conn: Sql, state: StateReader, before: SchemaDocument | None, after: SchemaDocument
) -> list[Impact]:
    """One entry per label or type with live data that a review rule, review floor or
    resolution policy new in ``after`` would have caught any of."""
    counts = state.counts(conn)
    live: list[tuple[Of, str, int]] = [
        *(("label", label, n) for label, n in counts.labels.items()),
        *(("relationship_type", rtype, n) for rtype, n in counts.relationship_types.items()),
    ]
    was = before.review_rules or [] if before is not None else []
    found: list[Impact] = []
    for rule in [r for r in after.review_rules or [] if r not in was]:
        for of, name, n in live:
            if not rule.labels or name in rule.labels:
                found += _held(conn, state, rule, of, name, n, _written(conn, state, of, name))
    for of, name, n in live:
        floors = _floors(before, after, of, name)
        if floors is not None:
            found += _below(floors, of, name, n, _written(conn, state, of, name))
    for label, node in after.nodes.items():
        old = before.nodes.get(label) if before is not None else None
        policy = node.resolution
        if policy is None or policy.policy == "off" or counts.labels.get(label, 0) < 2:
            continue
        if old is not None and old.resolution == policy:
            continue
        found += _duplicates(state.nodes_labelled(conn, label), label, counts.labels[label], policy)
    return found


def _written(conn: Sql, state: StateReader, of: Of, name: str) -> Iterator[Written]:
    if of == "label":
        for row in state.nodes_labelled(conn, name):
            yield row.identity, row.provenance, row.updated_by
    else:
        for ended in state.edges_typed(conn, name):
            yield ended.edge.identity, ended.edge.provenance, ended.edge.updated_by


def _floors(
    before: SchemaDocument | None, after: SchemaDocument, of: Of, name: str
) -> tuple[float, float] | None:
    """The review floor before and after, when ``after`` raises it (0: none)."""
    new = _floor(after, of, name)
    old = (_floor(before, of, name) if before is not None else None) or 0.0
    return (old, new) if new is not None and new > old else None


def _floor(document: SchemaDocument, of: Of, name: str) -> float | None:
    if of == "label":
        node = document.nodes.get(name)
        return node.review_below if node is not None else None
    rel = document.relationships.get(name)
    return rel.review_below if rel is not None else None


def _below(
    floors: tuple[float, float], of: Of, name: str, live: int, rows: Iterable[Written]
) -> list[Impact]:
    old, new = floors
    caught = [i for i, p, _ in rows if p is not None and old <= p.confidence < new]
    if not caught:
        return []
    why = f"last written with a confidence below the new review floor {new:g}"
    return [
        Impact(
            of=of,
            name=name,
            live=live,
            outcome="held",
            caught=len(caught),
            example=caught[0],
            why=why,
        )
    ]


def _held(
    conn: Sql,
    state: StateReader,
    rule: ReviewRule,
    of: Of,
    name: str,
    live: int,
    rows: Iterable[Written],
) -> Iterator[Impact]:
    approved: dict[str, int] = {}
    caught, example = 0, None
    for identity, provenance, agent in rows:
        method = provenance.extraction_method if provenance is not None else None
        if rule.extraction_methods and method not in rule.extraction_methods:
            continue
        if rule.until_approved:
            if agent not in approved:
                approved[agent] = state.approved_writes(conn, agent)
            if approved[agent] >= rule.until_approved:
                continue
        caught += 1
        example = example or identity
    if caught:
        yield Impact(
            of=of,
            name=name,
            live=live,
            outcome="held",
            caught=caught,
            example=example,
            why=f"last written as the new rule would hold: it {rule_text(rule.model_dump())}",
        )


def _duplicates(
    rows: Iterable[NodeRow], label: str, live: int, policy: ResolutionDoc
) -> list[Impact]:
    reading = name_rules(policy)
    names: dict[str, NormalizedName] = {}
    index: list[tuple[str, str]] = []  # (blocking key, identity), sorted: the index a write probes
    same: dict[str, set[str]] = {}  # an identity property's value -> the nodes holding it
    for row in rows:
        node = {**row.properties, **row.keys}
        name = normal_name(policy, name_of(policy, node, row.keys))
        names[row.identity] = name
        index += [(key, row.identity) for key in keys_of(name, policy.kind, reading)]
        for prop in policy.identity:
            if node.get(prop) is not None:
                same.setdefault(f"{prop}={str(node[prop]).casefold()}", set()).add(row.identity)
    index.sort()
    keys = [key for key, _ in index]
    twins = {i for group in same.values() if len(group) > 1 for i in group}
    thresholds = Thresholds(auto=policy.auto_threshold, propose=policy.propose_threshold)
    caught, landed, example = 0, 0, None
    step = max(1, -(-len(names) // SCORED))  # every node, or every step-th of a large label
    scored = list(names.items())[::step]
    for identity, name in scored:
        verdicts: set[Verdict] = {"same"} if identity in twins else set()
        for other in _candidates(index, keys, name, policy, identity):
            verdicts.add(
                decide(score_normalized(name, names[other], policy.kind, reading), thresholds)
            )
        if verdicts - {"different"}:
            caught += 1
            landed += "same" in verdicts
            example = example or identity
    if not caught:
        return []
    lands = f" ({landed} would have been written onto it)" if policy.policy == "auto" else ""
    return [
        Impact(
            of="label",
            name=label,
            live=live,
            outcome="duplicates",
            caught=caught,
            sampled=len(scored) if step > 1 else None,
            example=example,
            why=f"a probable duplicate under resolution policy {policy.policy}{lands}",
        )
    ]


def _candidates(
    index: list[tuple[str, str]],
    keys: list[str],
    name: NormalizedName,
    policy: ResolutionDoc,
    own: str,
) -> set[str]:
    """The nodes a write of ``name`` would meet: each probe's range, ``WINDOW`` rows of it
    besides the node's own (a write's name is not in the index yet)."""
    met: set[str] = set()
    for start, stop, down in probes_of(name, policy.kind, name_rules(policy)):
        lo, hi = bisect_left(keys, start), bisect_left(keys, stop)
        found = 0
        for at in range(hi - 1, lo - 1, -1) if down else range(lo, hi):  # from the near end
            if found == WINDOW:
                break
            if (identity := index[at][1]) != own:
                met.add(identity)
                found += 1
    return met


__all__ = ["caught_impact"]
