"""Merging duplicate nodes and undoing a merge: the requests, their results, and the calls.

``merge_nodes`` folds a duplicate into a survivor of the same label — its relationships
re-drawn, its values taken by the conflict policy (``gate.merges.plan``,
``gate.merges.values``), its identity an alias later writes resolve to — and
``unmerge_nodes`` undoes one merge exactly (``gate.merges.undo``). Both are events in one
transaction each, under the caller's provenance; nothing is deleted that the log does not
keep. Reviewers and admins call them (``merge_nodes`` / ``unmerge_nodes`` over MCP,
``writegate merge`` / ``unmerge`` on the command line).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from writegate.eventlog import Actor, Event, Transaction
from writegate.gate import checks
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.limits import idempotency_key
from writegate.gate.merges.plan import MergeInput, emit_merge
from writegate.gate.merges.undo import emit_unmerge
from writegate.gate.models import Keys, Provenanced, Rejected, parse_request
from writegate.gate.personal import Emitter, planned
from writegate.gate.resolution.matching import keys_for, name_of
from writegate.gate.results import REFUSALS
from writegate.gate.schema import LoadedSchema
from writegate.gate.writing import Writer
from writegate.language import (
    NodeRef,
    NodesMerged,
    NodesUnmerged,
    NodeWritten,
    RelationshipWritten,
    Superseded,
    merge_stream,
    payload_of,
)
from writegate.projections.state import NodeRow

_REASON = Field(default="", max_length=2000, description="Why, for the audit trail.")


class MergeNodesRequest(Provenanced):
    label: StrictStr = Field(min_length=1, max_length=200, description="The nodes' label.")
    survivor_keys: Keys = Field(description="Merge keys of the node that stays.")
    duplicate_keys: Keys = Field(description="Merge keys of the duplicate folded into it.")
    duplicate_label: StrictStr | None = Field(
        default=None,
        max_length=200,
        description="The duplicate's label, if another of the survivor's identity group.",
    )
    reason: StrictStr = _REASON


class UnmergeNodesRequest(Provenanced):
    merge: StrictStr = Field(
        min_length=1, max_length=64, description="The merge's id, from merge_nodes."
    )
    reason: StrictStr = _REASON


_RESULT = ConfigDict(extra="forbid", frozen=True)


class MergeResult(BaseModel):
    model_config = _RESULT

    status: Literal["merged"] = "merged"
    merge: str  # its id: unmerge_nodes takes it
    survivor: str
    merged: str  # the duplicate's identity, now an alias of the survivor
    seq: int  # the closing nodes.merged event
    taken: list[str]  # properties the survivor took from the duplicate
    superseded: list[Superseded]  # the survivor's values they replaced
    relationships_moved: int


class UnmergeResult(BaseModel):
    model_config = _RESULT

    status: Literal["unmerged"] = "unmerged"
    merge: str
    survivor: str
    restored: str
    seq: int
    relationships_restored: int
    kept: list[str]  # changed since the merge, so left as they are now


class Merges:
    """Merging and unmerging over one gate's ``Writer``."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.state = writer.planner.state

    def merge_nodes(self, arguments: Mapping[str, Any], actor: Actor) -> MergeResult | Rejected:
        result: MergeResult | Rejected = self._run(
            "merge_nodes", MergeNodesRequest, arguments, actor
        )
        return result

    def unmerge_nodes(self, arguments: Mapping[str, Any], actor: Actor) -> UnmergeResult | Rejected:
        result: UnmergeResult | Rejected = self._run(
            "unmerge_nodes", UnmergeNodesRequest, arguments, actor
        )
        return result

    def _run(
        self,
        name: str,
        model: type[MergeNodesRequest] | type[UnmergeNodesRequest],
        arguments: Mapping[str, Any],
        actor: Actor,
    ) -> Any:
        writer = self.writer
        raw = dict(arguments)
        try:
            key = idempotency_key(raw.pop("idempotency_key", None))
            request = parse_request(model, raw)
            stored = {**raw, **({"idempotency_key": key} if key is not None else {})}
            earlier = writer.earlier(actor, key, stored)
            if earlier is None:
                if isinstance(request, MergeNodesRequest):
                    plan = self._merge(request, stored)
                else:
                    plan = self._unmerge(request, stored)
                earlier = writer.append_planned(plan, actor, key, stored).events
            return _result(earlier)
        except REFUSALS as exc:
            return writer.refused(actor, name, exc, raw)

    def _merge(self, request: MergeNodesRequest, stored: dict[str, Any]) -> Any:
        planner = self.writer.planner
        state = self.state

        def plan(snapshot: LoadedSchema) -> Any:
            def then() -> Emitter:  # personal nodes: named by pseudonyms (``planned``)
                resolved = checks.resolve_label(
                    request.label, snapshot.registry, planner.label_policy(snapshot)
                )
                entry = resolved.entry
                checks.check_keys(request.survivor_keys, entry, "survivor_keys")
                d_label, d_entry = resolved.label, entry
                if request.duplicate_label is not None:
                    other = checks.resolve_label(
                        request.duplicate_label, snapshot.registry, planner.label_policy(snapshot)
                    )
                    d_label, d_entry = other.label, other.entry
                    if d_label != resolved.label and d_label not in entry.group:
                        raise GateRejection(
                            ErrorCode.INVALID_ARGUMENT,
                            f"{d_label} and {resolved.label} are not one identity group of "
                            "the schema: only nodes of one label, or of one declared group, merge",
                            {"field": "duplicate_label"},
                        )
                checks.check_keys(request.duplicate_keys, d_entry, "duplicate_keys")
                s_ref = NodeRef.of(resolved.label, request.survivor_keys)
                d_ref = NodeRef.of(d_label, request.duplicate_keys)
                if s_ref.identity == d_ref.identity:
                    raise GateRejection(
                        ErrorCode.INVALID_ARGUMENT,
                        "survivor_keys and duplicate_keys name the same node",
                        {"field": "duplicate_keys"},
                    )
                provenance = planner.provenance(request, snapshot)
                rules = entry.resolution

                def index(properties: Mapping[str, Any]) -> list[str] | None:
                    if rules is None:
                        return None
                    name = name_of(rules, properties, s_ref.keys)
                    return keys_for(rules, s_ref.label, name, properties)

                def decide(tx: Transaction, _item: int | None) -> None:
                    survivor = self._node(tx, s_ref, "survivor_keys", request.if_version)
                    duplicate = self._node(tx, d_ref, "duplicate_keys", None)
                    merge = MergeInput(
                        merge=uuid4().hex,
                        survivor=survivor,
                        duplicate=duplicate,
                        entry=entry,
                        registry=snapshot.registry,
                        reason=request.reason,
                        provenance=provenance,
                        request=stored,
                        index=index,
                    )
                    emit_merge(state, tx, merge)

                return decide

            return single(planned(self.writer.log, snapshot, stored, then))

        return plan

    def _unmerge(self, request: UnmergeNodesRequest, stored: dict[str, Any]) -> Any:
        planner = self.writer.planner
        state = self.state
        found = self.writer.log.latest(merge_stream(request.merge))
        record = payload_of(found) if found is not None else None
        if not isinstance(record, NodesMerged):
            raise GateRejection(
                ErrorCode.MERGE_NOT_FOUND,
                f"merge {request.merge} "
                + ("was undone already" if record is not None else "does not exist"),
                {"merge": request.merge, "undone": record is not None},
            )
        merged = record
        _not_forgotten(merged)

        def plan(snapshot: LoadedSchema) -> Any:
            provenance = planner.provenance(request, snapshot)

            def then() -> Emitter:
                def decide(tx: Transaction, _item: int | None) -> None:
                    if request.if_version is not None:
                        self._node(tx, merged.survivor, "merge", request.if_version)
                    entry = snapshot.registry.get_entry(merged.merged.label)
                    hidden = entry.unsearchable if entry is not None else []
                    emit_unmerge(state, tx, merged, request.reason, provenance, stored, hidden)

                return decide

            # sealed as the merge was: its record names whose values it gives back
            named = merged.model_dump(mode="json", by_alias=True)
            return single(planned(self.writer.log, snapshot, named, then))

        return plan

    def _node(self, tx: Transaction, ref: NodeRef, field: str, version: int | None) -> NodeRow:
        found = self.state.node(tx.conn, ref.identity)
        if found is None:
            alias = self.state.alias_of(tx.conn, ref.identity)
            raise GateRejection(
                ErrorCode.NODE_NOT_FOUND,
                f"node {ref.identity} does not exist"
                + (f" (merged into {alias[0]} by merge {alias[1]})" if alias else ""),
                {"field": field, "label": ref.label, "keys": ref.keys}
                | ({"merged_into": alias[0], "merge": alias[1]} if alias else {}),
            )
        if version is not None and found.version != version:
            raise GateRejection(
                ErrorCode.VERSION_CONFLICT,
                f"{ref.identity} is at version {found.version}, not {version}",
                {"stream": ref.stream, "expected": version, "current_version": found.version},
            )
        return found


def _not_forgotten(merged: NodesMerged) -> None:
    """Refuse to undo a merge whose people were forgotten: its record reads their keys as
    null, and giving back a node of no one would only make a stranger."""
    for ref in (merged.survivor, merged.merged):
        if any(value is None for value in ref.keys.values()):
            raise GateRejection(
                ErrorCode.MERGE_NOT_UNDOABLE,
                f"merge {merged.merge} cannot be undone: the person it merged was forgotten",
                {"merge": merged.merge, "forgotten": True},
            )


def single(emit: Emitter) -> Callable[[Transaction], None]:
    """An emitter as the one decision of an append (no batch item)."""
    return lambda tx: emit(tx, None)


def _result(events: Sequence[Event]) -> MergeResult | UnmergeResult:
    payloads = [(event, payload_of(event)) for event in events]
    event, closing = payloads[-1]
    if isinstance(closing, NodesMerged):
        superseded = [
            s
            for _, p in payloads
            if isinstance(p, NodeWritten) and p.superseded
            for s in p.superseded
        ]
        return MergeResult(
            merge=closing.merge,
            survivor=closing.survivor.identity,
            merged=closing.merged.identity,
            seq=event.seq,
            taken=sorted(closing.set),
            superseded=superseded,
            relationships_moved=len(closing.relationships),
        )
    if isinstance(closing, NodesUnmerged):
        restored = sum(1 for _, p in payloads if isinstance(p, RelationshipWritten) and p.created)
        return UnmergeResult(
            merge=closing.merge,
            survivor=closing.survivor,
            restored=closing.restored.identity,
            seq=event.seq,
            relationships_restored=restored,
            kept=closing.kept,
        )
    raise TypeError(f"event {event.seq} closes no merge: {event.type}")
