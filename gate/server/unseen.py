"""A deletion or an update aimed at a node the caller's grant does not see, answered as one
aimed at nothing (issue 41): the code, message and details the gate gives a node that is
not there, made by the functions the gate makes them with, so the two cannot drift apart.

A write that would make or change the node (``write_node``, ``add_<label>``) cannot be
answered so — for a node that is not there it would succeed — and stays ``POLICY_DENIED``
(``write_scopes``). In a batch, a deletion aimed at a hidden node is refused when the batch
reaches it, so the answer is the one its items would get were the node not there.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextlib import suppress
from functools import partial
from typing import Any

from writegate.eventlog.sql import Sql
from writegate.gate import checks
from writegate.gate.errors import GateRejection, relationship_not_found
from writegate.gate.personal import identity_in
from writegate.gate.resolution.matching import not_found
from writegate.gate.schema import LoadedSchema
from writegate.gate.server.label_tools import nothing_to_update
from writegate.gate.server.tools import ToolCall, ToolSpec
from writegate.gate.writing import Refusing
from writegate.language import NodeRef, relationship_identity
from writegate.projections.state import StateReader


def unseen(call: ToolCall, spec: ToolSpec, snapshot: LoadedSchema | None) -> GateRejection | None:
    """The answer to ``spec``'s call were its hidden node not there; None for a write that
    is not a deletion or an update (or one whose arguments the tool itself refuses)."""
    if snapshot is None:
        return None
    raw = call.raw
    try:
        if spec.name == "delete_node":
            ref = _ref(call, snapshot, raw.get("label"), raw.get("merge_keys"))
            with call.gate.log.snapshot() as conn:
                return not_found(call.gate.state, conn, ref)
        if spec.labels and spec.name.startswith(("delete_", "update_")):
            [label] = spec.labels
            entity = raw.get(label.lower())
            entry = snapshot.registry.get_entry(label)
            if not isinstance(entity, Mapping) or entry is None:
                return None
            keys = {k: entity[k] for k in entry.merge_keys if k in entity}
            if spec.name.startswith("update_"):
                return nothing_to_update(label, keys)
            with call.gate.log.snapshot() as conn:
                return not_found(call.gate.state, conn, _ref(call, snapshot, label, keys))
        if spec.name == "delete_relationship":
            rtype = checks.resolve_type(str(raw.get("type")), snapshot.registry).type
            start = _ref(call, snapshot, raw.get("from_label"), raw.get("from_keys"))
            end = _ref(call, snapshot, raw.get("to_label"), raw.get("to_keys"))
            return relationship_not_found(
                relationship_identity(rtype, start.identity, end.identity)
            )
    except (GateRejection, TypeError, ValueError):
        return None  # arguments the tool refuses itself, as it would for any caller
    return None


def unseen_items(
    call: ToolCall, snapshot: LoadedSchema | None, hidden: Collection[str]
) -> dict[int, Refusing] | None:
    """A batch's deletions aimed at a node the grant hides (``hidden``, identities), each
    refused when the batch reaches it as one aimed at a node that is not there (the item's
    ``NODE_NOT_FOUND`` or ``RELATIONSHIP_NOT_FOUND``, in its place among the items' own
    refusals); None when an item that would make or change a node names a hidden one
    (``POLICY_DENIED``, as for one write)."""
    items = call.raw.get("items")
    if snapshot is None or not isinstance(items, list):
        return None
    refusing: dict[int, Refusing] = {}
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue  # the batch refuses it itself
        ends = [_named_ref(call, snapshot, item, label, keys) for label, keys in ENDS]
        aimed = [ref for ref in ends if ref is not None and ref.identity in hidden]
        if not aimed:
            continue
        op = item.get("op")
        if op == "delete_node" and ends[0] is not None:
            refusing[index] = partial(_absent, call.gate.state, ends[0])
        elif op == "delete_relationship" and ends[1] is not None and ends[2] is not None:
            with suppress(GateRejection, TypeError, ValueError):
                rtype = checks.resolve_type(str(item.get("type")), snapshot.registry).type
                edge = relationship_identity(rtype, ends[1].identity, ends[2].identity)
                refusing[index] = partial(_edge_absent, edge)
        else:
            return None
    return refusing


ENDS = (("label", "merge_keys"), ("from_label", "from_keys"), ("to_label", "to_keys"))
"""The fields a write's arguments name a node by: its own, a relationship's two ends."""


def _named_ref(
    call: ToolCall, snapshot: LoadedSchema, item: Mapping[str, Any], label: str, keys: str
) -> NodeRef | None:
    with suppress(GateRejection, TypeError, ValueError):
        return _ref(call, snapshot, item.get(label), item.get(keys))
    return None


def _absent(state: StateReader, ref: NodeRef, conn: Sql) -> GateRejection:
    return not_found(state, conn, ref)


def _edge_absent(identity: str, _conn: Sql) -> GateRejection:
    return relationship_not_found(identity)


def _ref(call: ToolCall, snapshot: LoadedSchema, label: Any, keys: Any) -> NodeRef:
    """The node ``label`` (a synonym: its label) and ``keys`` name, as the planner names it."""
    if not isinstance(label, str) or not isinstance(keys, Mapping):
        raise TypeError("no node named")
    registry = snapshot.registry
    bare = label.removeprefix(":")
    canonical = bare if registry.get_entry(bare) is not None else registry.remap_target(bare)
    if canonical is None:
        raise ValueError(f"no label {bare}")
    return NodeRef.parse(identity_in(call.gate.log, snapshot, canonical, keys))
