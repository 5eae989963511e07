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
from writegate.gate.resolution.score import Thresholds, decide, score_normalized
from writegate.gate.schema.document import ResolutionDoc
from writegate.gate.schema.registry import SchemaEntry
from writegate.language import NodeRef
from writegate.projections.state import NodeRow, StateReader

MAX_CANDIDATES = 50  # a probe's cap: blocks are small by design (bench/bench_resolution.py)


@dataclass(frozen=True)
class Resolved:
    """Where the write lands: its own node (``ref``), or an existing one it resolved to."""

    ref: NodeRef
    existing: NodeRow | None
    resolved_from: str | None
    keys: list[str] | None  # what the event indexes (None: not a resolvable label)


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
        return Resolved(ref, existing, None, keys_for(rules, name, node))
    return resolve(state, conn, rules, ref, name, node)


def keys_for(rules: ResolutionDoc, name: str, properties: Mapping[str, Any]) -> list[str]:
    """The blocking keys of a node's name, and one ``id:`` key per identity property set."""
    keys = set(keys_of(normalize(name, rules.kind), rules.kind)) if name else set()
    for prop in rules.identity:
        if properties.get(prop) is not None:
            keys.add(f"id:{prop}={str(properties[prop]).casefold()}")
    return sorted(keys)


def resolve(
    state: StateReader,
    conn: Sql,
    rules: ResolutionDoc,
    ref: NodeRef,
    name: str,
    properties: Mapping[str, Any],
) -> Resolved:
    """The node a creating write lands on, or the refusal its label's policy calls for."""
    keys = keys_for(rules, name, properties)
    if rules.policy == "off" or not keys:
        return Resolved(ref, None, None, keys)
    label_prefix = ref.label + "{"
    found = [
        i
        for i in state.resolution_candidates(conn, keys, MAX_CANDIDATES)
        if i.startswith(label_prefix) and i != ref.identity
    ]
    rows = state.nodes(conn, found)
    thresholds = Thresholds(auto=rules.auto_threshold, propose=rules.propose_threshold)
    written = normalize(name, rules.kind)
    scored: list[tuple[float, str, NodeRow, list[str], bool]] = []
    for row in rows:
        shared = [p for p in rules.identity if _same(properties.get(p), row.properties.get(p))]
        if shared:
            reasons = [f"the same {', '.join(shared)}"]
            scored.append((1.0, "same", row, reasons, False))
            continue
        other = name_of(rules, row.properties, row.keys)
        match = score_normalized(written, normalize(other, rules.kind), rules.kind)
        judged = decide(match, thresholds)
        if judged != "different":
            scored.append((match.score, judged, row, list(match.reasons), bool(match.vetoes)))
    if not scored:
        return Resolved(ref, None, None, keys)
    scored.sort(key=lambda item: (-item[0], item[2].identity))
    best_score, best_verdict, best, _, _ = scored[0]
    if rules.policy == "auto" and best_verdict == "same":
        target = NodeRef.of(best.label, best.keys, None)
        merged = {**best.properties, **{k: v for k, v in properties.items() if k not in ref.keys}}
        kept = keys_for(rules, name_of(rules, merged, best.keys), merged)
        return Resolved(target, best, ref.identity, kept)
    raise GateRejection(
        ErrorCode.POSSIBLE_DUPLICATE,
        f"{ref.identity} is probably {best.identity} (score {best_score:.2f}); write to it, "
        "or send resolution: new if it is another",
        {
            "candidates": [
                {
                    "label": row.label,
                    "merge_keys": row.keys,
                    "score": round(value, 4),
                    "verdict": v,
                    "reasons": reasons,
                }
                for value, v, row, reasons, _ in scored[:10]
            ]
        },
    )


def _same(a: Any, b: Any) -> bool:
    return a is not None and b is not None and str(a).casefold() == str(b).casefold()
