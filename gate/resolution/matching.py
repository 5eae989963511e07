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
from typing import Any

from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.resolution.keys import keys_of
from writegate.gate.resolution.normalize import normalize
from writegate.gate.resolution.score import Thresholds, decide, score_normalized, score_value
from writegate.gate.schema.document import ResolutionDoc
from writegate.gate.schema.registry import SchemaEntry
from writegate.language import NodeRef, parse_node_identity
from writegate.projections.state import NodeRow, StateReader

MAX_CANDIDATES = 50  # the same normal form or identity: a cap never reached in practice
MAX_NEIGHBOURS = 12  # phonetic neighbours scored, those sharing the most keys first


@dataclass(frozen=True)
class Resolved:
    """Where the write lands: its own node (``ref``), or an existing one it resolved to."""

    ref: NodeRef
    existing: NodeRow | None
    resolved_from: str | None
    keys: list[str] | None  # what the event indexes (None: not a resolvable label)


def through_alias(state: StateReader, conn: Sql, ref: NodeRef) -> tuple[NodeRef, str | None]:
    """The node a write naming ``ref`` lands on: ``ref``, or — when ``ref`` is a duplicate
    merged away — the survivor, with the identity the writer named (an index probe)."""
    alias = state.alias_of(conn, ref.identity)
    if alias is None:
        return ref, None
    return NodeRef.parse(alias[0]), ref.identity


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
    not resolvable). Only a write that would create a node is resolved, and not when the
    writer said it is ``new``."""
    rules = entry.resolution
    if rules is None:
        return Resolved(ref, existing, None, None)
    node = {**(existing.properties if existing else {}), **ref.keys, **changes}
    name = name_of(rules, node, ref.keys)
    if existing is not None or new or rules.policy == "off":
        return Resolved(ref, existing, None, keys_for(rules, ref.label, name, node))
    return resolve(state, conn, rules, ref, name, node, entry.group)


def keys_for(
    rules: ResolutionDoc, label: str, name: str, properties: Mapping[str, Any]
) -> list[str]:
    """The blocking keys of a node's name, and one ``id:`` key per identity property set,
    each under its label (``Person/x:alan turing``): a probe meets that label's nodes only."""
    keys = set(keys_of(normalize(name, rules.kind), rules.kind)) if name else set()
    for prop in rules.identity:
        if properties.get(prop) is not None:
            keys.add(f"id:{prop}={str(properties[prop]).casefold()}")
    return sorted(f"{label}/{key}" for key in keys)


def resolve(
    state: StateReader,
    conn: Sql,
    rules: ResolutionDoc,
    ref: NodeRef,
    name: str,
    properties: Mapping[str, Any],
    group: Mapping[str, ResolutionDoc] | None = None,
) -> Resolved:
    """The node a creating write lands on, or the refusal its label's policy calls for.
    ``group``: the other labels of its identity group, whose nodes are candidates too —
    proposed, never landed on (their label's schema did not check this write)."""
    keys = keys_for(rules, ref.label, name, properties)
    if rules.policy == "off" or not keys:
        return Resolved(ref, None, None, keys)
    group = group or {}
    labels = {ref.label: rules, **group}
    probes = [f"{label}/{key.partition('/')[2]}" for label in labels for key in keys]
    found = _candidates(state, conn, probes, ref, labels)
    thresholds = Thresholds(auto=rules.auto_threshold, propose=rules.propose_threshold)
    written = normalize(name, rules.kind)
    # a name kept in the merge key is read from the identity: no row is loaded to score it
    needs_rows = any(_needs_rows(r) for r in labels.values())
    rows = {r.identity: r for r in state.nodes(conn, found)} if needs_rows else {}
    scored: list[tuple[float, str, NodeRef, list[str]]] = []
    for identity in found:
        label, node_keys = parse_node_identity(identity)  # a model only for what is kept
        row = rows.get(identity)
        stored = row.properties if row is not None else node_keys
        shared = [p for p in rules.identity if _same(properties.get(p), stored.get(p))]
        if shared:
            scored.append((1.0, "same", NodeRef.parse(identity), [f"the same {', '.join(shared)}"]))
            continue
        theirs = labels.get(label, rules)
        other = normalize(name_of(theirs, stored, node_keys), rules.kind)
        if score_value(written, other, rules.kind) < thresholds.propose:
            continue  # "different": scored, never explained
        match = score_normalized(written, other, rules.kind)
        judged = decide(match, thresholds)
        if judged != "different":
            scored.append((match.score, judged, NodeRef.parse(identity), list(match.reasons)))
    if not scored:
        return Resolved(ref, None, None, keys)
    scored.sort(key=lambda item: (-item[0], item[2].identity))
    best_score, best_verdict, best, _ = scored[0]
    own = best.label == ref.label
    existing = state.node(conn, best.identity) if rules.policy == "auto" and own else None
    if existing is not None and best_verdict == "same":
        target = NodeRef.of(existing.label, existing.keys, None)
        added = {k: v for k, v in properties.items() if k not in ref.keys}
        merged = {**existing.properties, **added}
        kept = keys_for(rules, existing.label, name_of(rules, merged, existing.keys), merged)
        return Resolved(target, existing, ref.identity, kept)
    raise GateRejection(
        ErrorCode.POSSIBLE_DUPLICATE,
        f"{ref.identity} is probably {best.identity} (score {best_score:.2f}); write to it, "
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
                for value, v, node, reasons in scored[:10]
            ]
        },
    )


def _candidates(
    state: StateReader, conn: Sql, keys: list[str], ref: NodeRef, labels: Mapping[str, Any]
) -> list[str]:
    """Nodes of the written label (or its group's) sharing a key: those with the same normal
    form or an identity property always (those keys are selective), then the phonetic
    neighbours that share the most keys with it, up to a cap (a common sound is shared by
    many names)."""
    selective = tuple(f"{label}/{kind}:" for label in labels for kind in ("x", "id"))
    heads = tuple(f"{label}{{" for label in labels)
    strong = [k for k in keys if k.startswith(selective)]
    weak = [k for k in keys if not k.startswith(selective)]
    found: dict[str, None] = {}
    for probe, cap in ((strong, MAX_CANDIDATES), (weak, MAX_NEIGHBOURS)):
        for identity in state.resolution_candidates(conn, probe, cap):
            if identity.startswith(heads) and identity != ref.identity:
                found.setdefault(identity)
    return list(found)


def _needs_rows(rules: ResolutionDoc) -> bool:
    """Whether scoring reads stored properties (identity ones, or a name kept outside the
    merge keys); otherwise the identities say all it needs."""
    return bool(rules.identity) or rules.name is not None


def _same(a: Any, b: Any) -> bool:
    return a is not None and b is not None and str(a).casefold() == str(b).casefold()
