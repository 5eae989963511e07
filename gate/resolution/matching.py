"""Entity resolution in the write path: a write that would create a node of a resolvable
label first looks for the node it may duplicate.

Candidates are index probes, never a scan: the new name's blocking keys (and an ``id:``
key per declared identity property) against ``state_resolution_keys``, the same label
only. Each candidate's name is scored against the new one (``score``); an equal identity
property is a match outright. Then the label's policy:

- ``propose``: any candidate at or above ``propose_threshold`` refuses the write with
  ``POSSIBLE_DUPLICATE``, listing candidates, scores and reasons; the writer writes to the
  candidate, or sends ``resolution: "new"``;
- ``auto``: a candidate at or above ``auto_threshold`` with no veto (short names, acronyms,
  initials… never auto-resolve) takes the write, which lands on it with ``resolved_from``
  naming what the writer said; weaker candidates are proposed as above.

Every node of a resolvable label carries its keys in its ``node.written`` event, so a
replay rebuilds the index from the log alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from rapidfuzz import fuzz, process

from writegate.eventlog.sql import Sql
from writegate.gate.ahead import want_probe
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.resolution.commonness import unidentifying
from writegate.gate.resolution.disputes import disputes
from writegate.gate.resolution.evidence import Contribution
from writegate.gate.resolution.keys import keys_of, probes_of
from writegate.gate.resolution.normalize import NormalizedName, normalize_with, rules_for
from writegate.gate.resolution.score import Thresholds, below, decide, score_normalized
from writegate.gate.resolution.vetoes import VETO_REASONS
from writegate.gate.resolution.vocabulary import NameRules
from writegate.gate.resolution.weighing import evidence_keys, weighed
from writegate.gate.schema.document import ResolutionDoc
from writegate.gate.schema.registry import SchemaEntry
from writegate.language import NodeRef, clear_identity, parse_node_identity
from writegate.projections.state import NodeRow, StateReader
from writegate.projections.state.blocking import Probe, text_of

WINDOW = 3
"""Index rows a probe's range reads, whatever the graph's size."""
MAX_SCORED = 8
"""Candidates scored a write (those whose text is most like the written name's first)."""


@dataclass(frozen=True)
class Resolved:
    """Where the write lands: its own node (``ref``), or an existing one it resolved to."""

    ref: NodeRef
    existing: NodeRow | None
    resolved_from: str | None
    keys: list[str] | None  # what the event indexes (None: not a resolvable label)


@dataclass(frozen=True)
class Met:
    """The node a write naming a node meets: the one named, or — when that is a duplicate
    merged away — its survivor, with the identity the writer named (``aliased``)."""

    ref: NodeRef
    row: NodeRow | None  # None: no such node (yet)
    aliased: str | None


def met(state: StateReader, conn: Sql, ref: NodeRef) -> Met:
    """Where a write naming ``ref`` lands: ``ref`` if it exists, else through its alias
    (an index probe) the survivor it was merged into."""
    row = state.node(conn, ref.identity)
    if row is not None:
        return Met(ref, row, None)
    alias = state.alias_of(conn, ref.identity)
    if alias is None:
        return Met(ref, None, None)
    survivor = NodeRef.parse(alias[0])
    return Met(survivor, state.node(conn, survivor.identity), ref.identity)


def not_found(state: StateReader, conn: Sql, ref: NodeRef) -> GateRejection:
    """``NODE_NOT_FOUND`` for ``ref``, naming the survivor if it was merged away."""
    alias = state.alias_of(conn, ref.identity)
    where = f" (merged into {alias[0]} by merge {alias[1]})" if alias else ""
    return GateRejection(
        ErrorCode.NODE_NOT_FOUND,
        f"node {ref.identity} does not exist{where}",
        {"label": ref.label, "keys": ref.keys}
        | ({"merged_into": alias[0], "merge": alias[1]} if alias else {}),
    )


def name_of(rules: ResolutionDoc, node: Mapping[str, Any], merge_keys: Mapping[str, Any]) -> str:
    """The name a node is resolved by: the declared property, else its one merge key."""
    field = rules.name or (next(iter(merge_keys)) if len(merge_keys) == 1 else None)
    value = node.get(field) if field else None
    return str(value) if value is not None else ""


def land(
    state: StateReader,
    conn: Sql,
    entry: SchemaEntry,
    ref: NodeRef,
    existing: NodeRow | None,
    changes: Mapping[str, Any],
    *,
    new: bool,
) -> Resolved:
    """Where a write of ``ref`` lands and the keys its event indexes (None: its label is
    not resolvable). Only a write that would create a node — or fill a stub, a node only a
    relationship named — is resolved, and not when the writer said it is ``new``. A stub
    being filled is never landed elsewhere (its relationships would stay behind with it):
    a probable duplicate is proposed, for a reviewer to merge."""
    rules = entry.resolution
    if rules is None:
        return Resolved(ref, existing, None, None)
    node = {**(existing.properties if existing else {}), **ref.keys, **changes}
    name = name_of(rules, node, ref.keys)
    if (existing is not None and not existing.stub) or new or rules.policy == "off":
        return Resolved(ref, existing, None, keys_for(rules, ref.label, name, node))
    stub = existing is not None
    found = resolve(state, conn, rules, ref, name, node, entry.group, may_land=not stub)
    return Resolved(ref, existing, None, found.keys) if stub else found


def name_rules(rules: ResolutionDoc) -> NameRules:
    """How the label's names are read: its kind's rules and its declared stop suffixes."""
    return rules_for(rules.kind, tuple(rules.stop_suffixes or ()))


def normal_name(rules: ResolutionDoc, name: str) -> NormalizedName:
    return normalize_with(name, rules.kind, tuple(rules.stop_suffixes or ()))


def keys_for(
    rules: ResolutionDoc,
    label: str,
    name: str,
    properties: Mapping[str, Any],
    normal: NormalizedName | None = None,
) -> list[str]:
    """The index rows of a node's name, and one ``id:`` key per identity property set,
    each under its label (``Person/p:TRNK|a|ALN|alan turing``): a probe meets that label's
    nodes only. ``normal``: the name's normal form, if the caller has it already."""
    normal = normal or (normal_name(rules, name) if name else None)
    keys = set(keys_of(normal, rules.kind, name_rules(rules))) if name and normal else set()
    keys.update(_identity_keys(rules, properties))
    keys.update(evidence_keys(rules, properties))
    return sorted(f"{label}/{key}" for key in keys)


def _identity_keys(rules: ResolutionDoc, properties: Mapping[str, Any]) -> list[str]:
    return [
        f"id:{prop}={str(properties[prop]).casefold()}"
        for prop in rules.identity
        if properties.get(prop) is not None
    ]


def resolve(
    state: StateReader,
    conn: Sql,
    rules: ResolutionDoc,
    ref: NodeRef,
    name: str,
    properties: Mapping[str, Any],
    group: Mapping[str, ResolutionDoc] | None = None,
    *,
    may_land: bool = True,
) -> Resolved:
    """The node a creating write lands on, or the refusal its label's policy calls for.
    ``group``: the other labels of its identity group, whose nodes are candidates too —
    proposed, never landed on (their label's schema did not check this write)."""
    written = normal_name(rules, name)  # once: for the keys and the probes
    keys = keys_for(rules, ref.label, name, properties, written)
    if rules.policy == "off" or not keys:
        return Resolved(ref, None, None, keys)
    labels = {ref.label: rules, **(group or {})}
    scored, rows = _scored(state, conn, rules, labels, ref, written, properties)
    if not scored:
        return Resolved(ref, None, None, keys)
    scored.sort(key=lambda item: (-item[0], item[2].identity))
    best_score, best_verdict, best, _, _ = scored[0]
    own = best.label == ref.label
    landing = rules.policy == "auto" and own and may_land
    existing = None
    if landing:
        existing = rows[best.identity] if best.identity in rows else state.node(conn, best.identity)
    disputed = disputes(rules, existing.properties, properties) if existing else []
    if existing is not None and best_verdict == "same" and not disputed:
        target = NodeRef.of(existing.label, existing.keys, None)
        added = {k: v for k, v in properties.items() if k not in ref.keys}
        merged = {**existing.properties, **added}
        kept = keys_for(rules, existing.label, name_of(rules, merged, existing.keys), merged)
        return Resolved(target, existing, ref.identity, kept)
    if disputed:  # proposed, never landed on: it holds another number, another birth date
        value, _, node, reasons, said = scored[0]
        why = [f"never lands: {d.field} {d.held!r} held, {d.written!r} written" for d in disputed]
        scored[0] = (value, "possible", node, [*reasons, *why], said)
    scored = _in_clear(state, conn, scored[:10], rows)
    best = scored[0][2]
    raise GateRejection(
        ErrorCode.POSSIBLE_DUPLICATE,
        f"{clear_identity(ref.label, ref.keys)} is probably "
        f"{clear_identity(best.label, best.keys)} (score {best_score:.2f}); write to it, "
        "or send resolution: new if it is another",
        {
            "candidates": [
                {
                    "label": node.label,
                    "merge_keys": node.keys,
                    "score": round(value, 4),
                    "verdict": v,
                    "reasons": reasons,
                }
                | (
                    {"evidence": [c.model_dump() for c in said]}
                    if rules.evidence is not None
                    else {}
                )
                for value, v, node, reasons, said in scored
            ]
        },
    )


Scored = tuple[float, str, NodeRef, list[str], list[Contribution]]


def probe_ranges(
    rules: ResolutionDoc,
    labels: Mapping[str, ResolutionDoc],
    written: NormalizedName,
    properties: Mapping[str, Any],
) -> list[tuple[str, str, bool]]:
    """The index ranges a creating write probes: its name's, under each label of its
    group, and one per identity property set."""
    probes = probes_of(written, rules.kind, name_rules(rules))
    ids = _identity_keys(rules, properties)
    ranges = [(f"{label}/{a}", f"{label}/{b}", down) for label in labels for a, b, down in probes]
    ranges += [(f"{label}/{key}", f"{label}/{key}\x01", False) for label in labels for key in ids]
    return ranges


def read_ahead(entry: SchemaEntry, ref: NodeRef, node: Mapping[str, Any], *, new: bool) -> None:
    """A write of ``ref`` being planned: the candidates it would probe if it creates the
    node are read with the nodes it names (``gate.ahead``; on PostgreSQL only)."""
    if entry.resolution is not None and not new:
        want_probe(partial(probe_ahead, entry, ref, node))


def probe_ahead(
    entry: SchemaEntry, ref: NodeRef, node: Mapping[str, Any]
) -> tuple[Probe, int] | None:
    """What a write of ``ref`` would probe if it creates the node (``gate.ahead``: read with
    the nodes it names, on PostgreSQL); None where it would probe nothing."""
    rules = entry.resolution
    if rules is None or rules.policy == "off":
        return None
    name = name_of(rules, node, ref.keys)
    if not name:
        return None
    labels = {ref.label: rules, **(entry.group or {})}
    return tuple(probe_ranges(rules, labels, normal_name(rules, name), node)), WINDOW


def _scored(
    state: StateReader,
    conn: Sql,
    rules: ResolutionDoc,
    labels: Mapping[str, ResolutionDoc],
    ref: NodeRef,
    written: NormalizedName,
    properties: Mapping[str, Any],
) -> tuple[list[Scored], dict[str, NodeRow | None]]:
    """The candidates that reach the label's ``propose`` threshold, scored and explained,
    and the rows read to explain them (by identity; None: gone).

    The probes read at most ``WINDOW`` rows a range; each row carries its node's normal
    text, so candidates are scored without reading their nodes, at most ``MAX_SCORED`` of
    them (the most alike texts first), and only those reaching the threshold are explained
    from their stored names (read in one query)."""
    reading = name_rules(rules)
    ranges = probe_ranges(rules, labels, written, properties)
    same: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for key, identity in state.resolution_candidates(conn, ranges, WINDOW):
        if identity == ref.identity:
            continue
        text = text_of(key)
        if text is None:  # an equal identity property
            same.setdefault(identity, []).append(key.partition("/id:")[2].partition("=")[0])
        elif identity not in same:
            texts.setdefault(identity, text)
    if len(texts) > MAX_SCORED:
        ranked = process.extract(written.text, texts, scorer=fuzz.ratio, limit=MAX_SCORED)
        texts = {identity: text for text, _, identity in ranked}
    thresholds = _thresholds(rules.auto_threshold, rules.propose_threshold)
    others = [(i, text) for i, text in texts.items() if i not in same and text != written.text]
    lower = below(written, [text for _, text in others], thresholds.propose, rules.kind, reading)
    unlike = {i for (i, _), low in zip(others, lower, strict=True) if low}
    if rules.evidence is not None:  # weighed: the names that reach propose, equal identities
        probed = [*same, *(i for i in texts if i not in same and i not in unlike)]
        facts = (written, reading, properties)
        return weighed(state, conn, rules, labels, ref, facts, probed, _name_of_row)
    scored, rows = _same_identity(state, conn, rules, labels, written, same, thresholds)
    shared = sum(text == written.text for text in texts.values()) >= 2
    near: list[tuple[str, dict[str, Any], ResolutionDoc]] = []  # identity, keys, its rules
    for identity in texts:
        if identity in same or identity in unlike:
            continue  # "different": scored, never explained
        label, node_keys = parse_node_identity(identity)
        near.append((identity, node_keys, labels.get(label, rules)))
    if not near:  # most creating writes: every candidate told apart by ``below`` alone
        return scored, rows
    # read: a name kept in properties, and a personal node's keys (its pseudonym names none)
    named = [i for i, node_keys, theirs in near if theirs.name is not None or not node_keys]
    found = {row.identity: row for row in state.nodes(conn, named)} if named else {}
    rows.update({identity: found.get(identity) for identity in named})
    common: str | None = None  # why the name alone does not identify ("": it does)
    for identity, node_keys, theirs in near:
        row = rows.get(identity)
        stored, keys = (row.properties, node_keys or row.keys) if row else (node_keys, node_keys)
        match = score_normalized(
            written, normal_name(theirs, name_of(theirs, stored, keys)), rules.kind, reading
        )
        judged, reasons = decide(match, thresholds), list(match.reasons)
        if judged == "same" and shared and texts[identity] == written.text:
            judged = "possible"  # which of the nodes holding it? asked, never landed
            reasons.append(f"never auto-resolves: {VETO_REASONS['name_shared']}")
        if judged == "same" and common is None:  # read once, if the name alone would land
            common = unidentifying(state, conn, ref.label, written, rules) or ""
        if judged == "same" and common:
            judged = "possible"
            reasons.append(common)
        if judged != "different":
            scored.append((match.score, judged, NodeRef.parse(identity), reasons, []))
    return scored, rows


def _same_identity(
    state: StateReader,
    conn: Sql,
    rules: ResolutionDoc,
    labels: Mapping[str, ResolutionDoc],
    written: NormalizedName,
    same: Mapping[str, list[str]],
    thresholds: Thresholds,
) -> tuple[list[Scored], dict[str, NodeRow | None]]:
    """The candidates holding an equal identity value, and their rows: each a match, unless
    its name is less alike than ``propose_threshold`` (a hotel's switchboard number on its
    restaurant, a shared mailbox): then asked about, never landed on."""
    if not same:
        return [], {}
    found = {row.identity: row for row in state.nodes(conn, list(same))}
    scored: list[Scored] = []
    for identity, props in same.items():
        row, said = found.get(identity), f"the same {', '.join(props)}"
        theirs = labels.get(row.label, rules) if row else rules
        other = normal_name(theirs, name_of(theirs, row.properties, row.keys)) if row else None
        if other is not None and other.tokens and written.tokens:
            match = score_normalized(written, other, rules.kind, name_rules(rules))
            if match.score < thresholds.propose:
                why = f"{said} beside a name that differs ({match.score:.2f}): never lands"
                scored.append((thresholds.propose, "possible", NodeRef.parse(identity), [why], []))
                continue
        scored.append((1.0, "same", NodeRef.parse(identity), [said], []))
    return scored, {identity: found.get(identity) for identity in same}


@lru_cache(maxsize=64)
def _thresholds(auto: float, propose: float) -> Thresholds:
    """A label's thresholds, made once (a validated model: a few µs a write otherwise)."""
    return Thresholds(auto=auto, propose=propose)


def _in_clear(
    state: StateReader, conn: Sql, scored: list[Scored], rows: dict[str, NodeRow | None]
) -> list[Scored]:
    """The candidates with a personal node's keys read back from its row (its pseudonym
    names none), so that a refusal tells the writer whom it means, as a read by keys would."""
    hidden = [s[2].identity for s in scored if not s[2].keys and s[2].identity not in rows]
    rows.update({row.identity: row for row in state.nodes(conn, hidden)} if hidden else {})
    clear = []
    for value, verdict, node, reasons, said in scored:
        row = rows.get(node.identity) if not node.keys else None
        named = NodeRef(identity=node.identity, label=row.label, keys=row.keys) if row else node
        clear.append((value, verdict, named, reasons, said))
    return clear


def _name_of_row(rules: ResolutionDoc, row: NodeRow) -> NormalizedName:
    return normal_name(rules, name_of(rules, row.properties, row.keys))
