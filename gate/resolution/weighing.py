"""The candidates of a label that declares evidence fields, weighed (``evidence``).

The candidates are the same index probes as a names-only label's; their nodes are read in
one query (the rows a names-only label reads to explain its near names), and the written
values' frequencies in one more (``projections.state.valuecounts``), so a write costs two
reads more than a names-only one whatever the number of fields. Each candidate's name,
identity properties and declared fields each add a weight; the posterior probability is its
score. ``auto`` lands only at or above its threshold with no veto: the name's own vetoes, a
name that differs, a declared field that disagrees, or an identity value only that node holds
beside a name or field that differs (a hotel's switchboard number on its restaurant) —
such an identity value is at least proposed; one several nodes hold is ordinary evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from writegate.eventlog.sql import Sql
from writegate.gate.resolution.evidence import (
    Contribution,
    NameLevel,
    Outcome,
    compare,
    field_weight,
    name_level,
    name_weight,
    posterior,
    prior_weight,
    raw_value,
    value_key,
)
from writegate.gate.resolution.normalize import NormalizedName
from writegate.gate.resolution.score import score_normalized
from writegate.gate.resolution.vetoes import VETO_REASONS, Veto
from writegate.gate.resolution.vocabulary import NameRules
from writegate.gate.schema.document import ResolutionDoc
from writegate.language import NodeRef
from writegate.projections.state import NodeRow, StateReader
from writegate.projections.state.valuecounts import MARKER, value_counts

NameOf = Callable[[ResolutionDoc, NodeRow], NormalizedName]
"""A candidate's normal name, by its label's rules."""
Weighed = tuple[float, str, NodeRef, list[str], list[Contribution]]
_NAME_OUTCOME: dict[NameLevel, Outcome] = {
    "equal": "agree",
    "close": "near",
    "like": "near",
    "far": "near",
    "different": "disagree",
}


def identity_value(value: object) -> str | None:
    """An identity property's value as its ``id:`` key holds it."""
    return None if value is None else str(value).casefold()


def evidence_keys(rules: ResolutionDoc, properties: Mapping[str, Any]) -> list[str]:
    """The marker and one ``ev:`` key per declared field set (none: no evidence declared)."""
    if rules.evidence is None:
        return []
    keys = [MARKER]
    for field, doc in sorted(rules.evidence.items()):
        value = value_key(doc, raw_value(field, doc, properties))
        if value is not None:
            keys.append(f"ev:{field}={value}")
    return keys


def weighed(
    state: StateReader,
    conn: Sql,
    rules: ResolutionDoc,
    labels: Mapping[str, ResolutionDoc],
    ref: NodeRef,
    written: tuple[NormalizedName, NameRules, Mapping[str, Any]],
    candidates: list[str],
    names: NameOf,
) -> tuple[list[Weighed], dict[str, NodeRow | None]]:
    """The candidates reaching the label's ``propose`` threshold, weighed and explained, and
    the rows read (by identity; None: gone). ``written``: its normal name, how names are
    read, and its properties."""
    if not candidates:  # most creating writes: no name near enough, no identity shared
        return [], {}
    name, _, properties = written
    found = {row.identity: row for row in state.nodes(conn, candidates)}
    rows: dict[str, NodeRow | None] = {identity: found.get(identity) for identity in candidates}
    counts = value_counts(conn, _wanted(rules, ref.label, name, properties))
    out: list[Weighed] = []
    for identity in candidates:
        row = rows[identity]
        if row is not None:
            theirs = labels.get(row.label, rules)
            item = _weigh(rules, theirs, ref.label, counts, written, row, names)
            if item is not None:
                out.append(item)
    return out, rows


def _wanted(
    rules: ResolutionDoc, label: str, name: NormalizedName, properties: Mapping[str, Any]
) -> list[str]:
    wanted = [f"{label}/{MARKER}", f"{label}/name={name.text}"]
    for key in evidence_keys(rules, properties)[1:]:
        wanted += [f"{label}/{key}", f"{label}/{key.partition('=')[0]}"]
    for prop in rules.identity:
        if (value := identity_value(properties.get(prop))) is not None:
            wanted += [f"{label}/id:{prop}={value}", f"{label}/id:{prop}"]
    return wanted


def _weigh(
    rules: ResolutionDoc,
    theirs: ResolutionDoc,
    label: str,
    counts: Mapping[str, int],
    written: tuple[NormalizedName, NameRules, Mapping[str, Any]],
    row: NodeRow,
    names: NameOf,
) -> Weighed | None:
    name, reading, properties = written
    stored = row.properties
    population = counts.get(f"{label}/{MARKER}", 0)
    other = names(theirs, row)
    vetoes: list[Veto] = []
    reasons: list[str] = []
    field = rules.name or next(iter(row.keys), "name")
    # what the name alone, or an equal identity, would propose: evidence never proposes less
    asked = shared = False
    if name.tokens and other.tokens:
        match = score_normalized(name, other, rules.kind, reading)
        asked = match.score >= rules.propose_threshold
        level = name_level(match.rule, match.score, rules.propose_threshold)
        if "codes_differ" in match.vetoes:  # another model, unit or year: a disagreement
            level = "different"
        elif level in ("far", "different"):
            vetoes.append("names_differ")
        count = counts.get(f"{label}/name={name.text}", 0)
        if level == "equal" and count >= 2:  # several nodes hold it: it does not identify
            vetoes.append("name_shared")
        weight = name_weight(level, count, population)
        contributions = [Contribution(field=field, outcome=_NAME_OUTCOME[level], weight=weight)]
        vetoes += match.vetoes
        reasons += match.reasons
    else:
        level = "different"
        contributions = [Contribution(field=field, outcome="missing", weight=0.0)]
    unique = False
    for prop in rules.identity:
        mine, their = identity_value(properties.get(prop)), identity_value(stored.get(prop))
        if mine is None or their is None:
            contributions.append(Contribution(field=prop, outcome="missing", weight=0.0))
            continue
        outcome: Outcome = "agree" if mine == their else "disagree"
        held = counts.get(f"{label}/id:{prop}={mine}", 0)
        unique = unique or (outcome == "agree" and held <= 1)
        shared = shared or outcome == "agree"
        weight = field_weight("identity", outcome, held, counts.get(f"{label}/id:{prop}", 0))
        contributions.append(Contribution(field=prop, outcome=outcome, weight=weight))
    disagreeing = False
    for prop, doc in sorted((rules.evidence or {}).items()):
        value = raw_value(prop, doc, properties)
        outcome = compare(doc, value, raw_value(prop, doc, stored))
        key = value_key(doc, value)
        held = counts.get(f"{label}/ev:{prop}={key}", 0)
        weight = field_weight(doc.compare, outcome, held, counts.get(f"{label}/ev:{prop}", 0))
        contributions.append(Contribution(field=prop, outcome=outcome, weight=weight))
        if outcome == "disagree" and doc.veto:
            disagreeing = True
            vetoes.append("field_disagrees")
        elif outcome == "near" and doc.veto:  # a typo, or a sibling model one digit apart
            vetoes.append("field_nearly")
    if unique and (disagreeing or level not in ("equal", "close")):
        vetoes.append("identity_disputed")
    total = prior_weight(population) + sum(c.weight for c in contributions)
    probability = round(posterior(total), 4)
    unique_vetoes = tuple(dict.fromkeys(vetoes))
    if probability >= rules.auto_threshold and not unique_vetoes:
        verdict = "same"
    elif probability >= rules.propose_threshold or shared or asked:
        verdict = "possible"
    else:
        return None
    reasons = [
        *reasons[:1],
        *(c.sentence() for c in contributions),
        f"probability {probability:.4f} ({total:+.1f} bits with the prior of one node "
        f"in {max(population, 1)})",
        *(f"never auto-resolves: {VETO_REASONS[v]}" for v in unique_vetoes),
    ]
    return probability, verdict, NodeRef.parse(row.identity), reasons, contributions
