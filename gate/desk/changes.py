"""A change as a reviewer reads it: value by value, what stood beside what was written, each
with who wrote it and how sure (its confidence), never a write's raw JSON.

A node's history is its writes oldest first, so what a write changed is what the writes
before it on the page had set (on a later page, what came before is on an earlier one); a
held write is set beside the node as it stands now.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from writegate.gate.reads.views import HistoryEntry, NodeView
from writegate.gate.review import Proposal


@dataclass(frozen=True)
class Side:
    """One side of a change: a value, who wrote it and at what confidence."""

    value: Any
    agent: str | None
    confidence: float | None


@dataclass(frozen=True)
class Change:
    """One property: what stood before (None: not set, or not known here) and after."""

    name: str  # the property's
    before: Side | None
    after: Side
    known: bool = True  # False: what stood before is on an earlier page

    @property
    def same(self) -> bool:
        return self.before is not None and self.before.value == self.after.value


def history_changes(entries: Sequence[HistoryEntry], first_page: bool) -> dict[int, list[Change]]:
    """Each entry's changes by seq, old beside new, from the entries before it."""
    held: dict[str, Side] = {}
    changes: dict[int, list[Change]] = {}
    for entry in entries:
        rows = []
        for name, value in sorted(entry.changes.items()):
            if name.startswith("_"):  # a marker (a stub's), not a property
                continue
            after = Side(value, entry.agent, entry.confidence)
            before = held.get(name)
            rows.append(Change(name, before, after, known=before is not None or first_page))
            held[name] = after
        changes[entry.seq] = rows
    return changes


def proposal_changes(proposal: Proposal, now: NodeView | None) -> list[Change] | None:
    """What a held node write would change, beside the node as it stands (None: the write
    is not one of a node's properties, so it is shown as it was asked)."""
    properties = proposal.arguments.get("properties")
    if not isinstance(properties, dict):
        return None
    standing = now.properties if now is not None else {}
    rows = []
    for name, value in sorted(properties.items()):
        before = None
        if now is not None and name in standing:
            before = Side(standing[name], now.provenance.agent, now.provenance.confidence)
        rows.append(Change(name, before, Side(value, proposal.agent, proposal.confidence)))
    return rows


def as_text(value: Any) -> str:
    """A value as a person reads it: a string as it is, a list as its items, anything else
    as JSON (never Python's repr: ``['a', 'b']``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(as_text(item) for item in value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
