"""The path every write takes: limits, parsing, idempotency, planning, one append, a result.

Every operation has the same shape: check the request's size (``gate.limits``), parse
it (``INVALID_ARGUMENT``), answer an idempotent retry from the log, run the stateless
checks against one schema snapshot (``gate.planning``), then open one write transaction
in which the stateful checks run, the events are emitted and the transport's write guard
sees exactly what would be appended. Any refusal on the way appends nothing and is
recorded in the rejections table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from writegate.eventlog import (
    Actor,
    AppendOutcome,
    Event,
    Log,
    LogUnavailable,
    Transaction,
)
from writegate.eventlog.sql import Sql
from writegate.gate.ahead import ahead, naming
from writegate.gate.corroboration import SINGLE, Unchanged, answered, answers, quietly
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.limits import Limits, check_request, json_safe
from writegate.gate.limits import idempotency_key as checked_key
from writegate.gate.models import (
    BATCH_OPERATIONS,
    BatchResult,
    DeleteNodeRequest,
    DeleteNodeResult,
    DeleteRelationshipRequest,
    DeleteRelationshipResult,
    ItemResult,
    ProposedResult,
    Provenanced,
    Rejected,
    WriteNodeRequest,
    WriteNodeResult,
    WriteRelationshipRequest,
    WriteRelationshipResult,
    parse_request,
)
from writegate.gate.personal import bound_request, planned
from writegate.gate.planning import Emitter, Planner
from writegate.gate.refusal_seals import sealing
from writegate.gate.rejections import RejectionLog
from writegate.gate.results import (
    REFUSALS,
    ItemRefusal,
    batch_result,
    rejected,
    result_of,
)
from writegate.gate.schema import LoadedSchema
from writegate.gate.schema.sources import SCHEMA_STREAM

_log = logging.getLogger(__name__)

# the last word on what an actor may append: sees the exact events a write would add and
# raises GateRejection(POLICY_DENIED) to refuse them all (the transaction rolls back)
WriteGuard = Callable[[Actor, Sequence[Event]], None]
Refusing = Callable[[Sql], GateRejection]  # a batch item's refusal, made as the batch reaches it

Req = TypeVar("Req", bound=Provenanced)
Res = TypeVar("Res", bound=BaseModel)


@dataclass(frozen=True)
class Operation(Generic[Req, Res]):
    """One graph operation: the model its arguments follow, how it is planned, what it returns."""

    name: str
    request: type[Req]
    plan: Callable[[Planner, Req, LoadedSchema, Mapping[str, Any]], Emitter]
    result: type[Res]


WRITE_NODE = Operation("write_node", WriteNodeRequest, Planner.write_node, WriteNodeResult)
WRITE_RELATIONSHIP = Operation(
    "write_relationship",
    WriteRelationshipRequest,
    Planner.write_relationship,
    WriteRelationshipResult,
)
DELETE_NODE = Operation("delete_node", DeleteNodeRequest, Planner.delete_node, DeleteNodeResult)
DELETE_RELATIONSHIP = Operation(
    "delete_relationship",
    DeleteRelationshipRequest,
    Planner.delete_relationship,
    DeleteRelationshipResult,
)
OPERATIONS: dict[str, Operation[Any, Any]] = {
    op.name: op for op in (WRITE_NODE, WRITE_RELATIONSHIP, DELETE_NODE, DELETE_RELATIONSHIP)
}
assert tuple(OPERATIONS) == BATCH_OPERATIONS


class Writer:
    """Runs operations against one log; the ``Gate`` supplies the snapshot and limits."""

    def __init__(
        self,
        log: Log,
        planner: Planner,
        rejections: RejectionLog,
        snapshot: Callable[[], LoadedSchema],
        limits: Callable[[], Limits],
        refreshed: Callable[[], LoadedSchema],
    ) -> None:
        self.log = log
        self.planner = planner
        self.rejections = rejections
        self._snapshot = snapshot
        self._limits = limits
        self._refreshed = refreshed

    def single(
        self,
        operation: Operation[Req, Res],
        arguments: Mapping[str, Any],
        actor: Actor,
        guard: WriteGuard | None,
    ) -> Res | ProposedResult | Rejected:
        """One operation on its arguments exactly as sent (they become the event's request)."""
        arguments = dict(arguments)
        try:
            check_request(arguments, self._limits())
            key = checked_key(arguments.pop("idempotency_key", None))
            request = parse_request(operation.request, arguments)
            raw = {**arguments, **({"idempotency_key": key} if key is not None else {})}
            json_safe(raw)
            earlier = self.earlier(actor, key, raw)
            if earlier is not None:
                return _as(operation.result, result_of(earlier))

            quiet: dict[int, Unchanged] = {}  # a write that changed nothing: nothing appended

            def plan(snapshot: LoadedSchema) -> Decide:
                then = partial(operation.plan, self.planner, request, snapshot, raw)
                with naming() as names:
                    emit = planned(self.log, snapshot, raw, then)

                def decide(tx: Transaction) -> None:
                    quiet.clear()
                    ahead(tx, names)  # the nodes it names: one round trip, before its checks
                    quietly(emit, quiet)(tx, None)
                    if guard is not None:
                        guard(actor, tx.events)

                return decide

            outcome = self.append_planned(plan, actor, key, raw)
            if not outcome.events and quiet:
                return _as(operation.result, answered(self.log, quiet[SINGLE]))
            return _as(operation.result, result_of(outcome.events))
        except REFUSALS as exc:
            return self.refused(actor, operation.name, exc, arguments)

    def limits(self) -> Limits:
        """The limits a request is checked against now."""
        return self._limits()

    def operation(self, name: str) -> Operation[Any, Any]:
        return OPERATIONS[name]

    def deletion(
        self,
        operation: Operation[Req, Res],
        arguments: Mapping[str, Any],
        actor: Actor,
        guard: WriteGuard | None,
    ) -> Res | Rejected:
        """``single`` for the deletions, which are never held for review."""
        result = self.single(operation, arguments, actor, guard)
        if isinstance(result, ProposedResult):
            raise TypeError(f"{operation.name} was held for review: deletions never are")
        return result

    def batch(
        self,
        items: Any,
        idempotency_key: Any,
        actor: Actor,
        guard: WriteGuard | None,
        *,
        dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None,
        asked: Mapping[str, Any] | None = None,
        unseen: Mapping[int, Refusing] | None = None,
    ) -> BatchResult | Rejected:
        """Several operations accepted or refused as one; a refusal names the failing item.
        ``progress(done, total)``: items written so far in the transaction (from 0 again
        if it is retried). ``asked``: the one write the items were made from, where making
        them read the graph (a node's version, the edges to drop): the key is bound to it,
        as a retry reads the graph its first try changed and makes other items. ``unseen``:
        items refused, when the batch reaches them, by the refusal each makes (deletions
        aimed at what the caller may not see, ``gate.server.unseen``)."""
        request = {"items": items, "idempotency_key": idempotency_key}
        binding = request if asked is None else {"asked": asked, "idempotency_key": idempotency_key}
        try:
            check_request(request, self._limits())
            key = checked_key(idempotency_key)
            if not isinstance(items, list) or not items:  # how many: ``max_batch_items``
                raise GateRejection(
                    ErrorCode.INVALID_ARGUMENT,
                    "items must be a list of at least one operation",
                    {"field": "items"},
                )
            json_safe(request)
            earlier = self.earlier(actor, key, binding)
            if earlier is not None:
                return batch_result(earlier)

            quiet: dict[int, Unchanged] = {}  # the items that changed nothing

            def plan(snapshot: LoadedSchema) -> Decide:
                emitters: list[Emitter] = []
                with naming() as names:
                    for index, item in enumerate(items):
                        with ItemRefusal(index, item):
                            emitters.append(self._plan_item(item, snapshot))

                def decide(tx: Transaction) -> None:
                    quiet.clear()
                    ahead(tx, names)  # every item's nodes in one round trip
                    for index, (emit, item) in enumerate(zip(emitters, items, strict=True)):
                        with ItemRefusal(index, item):
                            if unseen and (refused := unseen.get(index)) is not None:
                                raise refused(tx.conn)
                            quietly(emit, quiet)(tx, index)
                        if progress is not None:
                            progress(index + 1, len(items))
                    if guard is not None:
                        guard(actor, tx.events)
                    if dry_run:
                        raise _DryRun(list(tx.events))

                return decide

            try:
                outcome = self.append_planned(plan, actor, key, binding)
            except _DryRun as rehearsal:
                return batch_result(rehearsal.args[0], answers(self.log, quiet))
            return batch_result(outcome.events, answers(self.log, quiet))
        except REFUSALS as exc:
            if dry_run:
                return rejected(exc)
            return self.refused(actor, "write_batch", exc, request)

    def earlier(self, actor: Actor, key: str | None, request: Any) -> list[Event] | None:
        """The events an earlier append under ``key`` produced (a retry's answer), or None."""
        if key is None:
            return None
        return self.log.earlier_append(actor, key, bound_request(self._snapshot(), request))

    def append_planned(
        self,
        plan: Callable[[LoadedSchema], Decide],
        actor: Actor,
        key: str | None,
        request: Any,
    ) -> AppendOutcome:
        """Plan against the schema snapshot and append, checking in the transaction that
        the snapshot is still the log's newest schema; if another process published since,
        reload and plan again, so a write is never checked against a superseded schema; a
        write the snapshot refuses is planned again if the log's schema has moved since."""
        snapshot = self._snapshot()
        for _ in range(_SCHEMA_ATTEMPTS):
            try:
                decide = _while_current(snapshot, plan(snapshot), self._snapshot)
            except GateRejection:
                if (newer := self._newer_than(snapshot)) is None:
                    raise
                snapshot = newer  # refused by a schema the log has superseded: plan again
                continue
            try:
                bound = bound_request(snapshot, request)
                return self.log.append(actor, decide, idempotency_key=key, request=bound)
            except _StaleSchema:
                snapshot = self._refreshed()
        raise GateRejection(
            ErrorCode.SCHEMA_SOURCE_UNAVAILABLE,
            f"the schema changed {_SCHEMA_ATTEMPTS} times while this write was checked; "
            "send it again",
            {"previous_snapshot_kept": True},
        )

    def _newer_than(self, snapshot: LoadedSchema) -> LoadedSchema | None:
        """The log's newest schema if ``snapshot`` is not it (None if it is, or if the schema
        is not the log's). A refusal is answered only once this says None, as an acceptance
        is committed only once the transaction has: one probe of the ``schema`` stream's
        version, and a reload only when it moved."""
        if snapshot.stream_version is None:
            return None
        head = self.log.stream_version(SCHEMA_STREAM)
        if head == snapshot.stream_version:
            return None
        cached = self._snapshot()
        return cached if cached.stream_version == head else self._refreshed()

    def _plan_item(self, item: Any, snapshot: LoadedSchema) -> Emitter:
        if not isinstance(item, dict) or item.get("op") not in OPERATIONS:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                f"each item must be an object whose 'op' is one of {list(OPERATIONS)}",
                {"field": "op"},
            )
        operation = OPERATIONS[item["op"]]
        arguments = {k: v for k, v in item.items() if k != "op"}
        if "idempotency_key" in arguments:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                "batch items may not carry their own idempotency_key",
                {"field": "idempotency_key"},
            )
        request = parse_request(operation.request, arguments)
        then = partial(operation.plan, self.planner, request, snapshot, item)
        return planned(self.log, snapshot, item, then)

    def refused(self, actor: Actor, operation: str, exc: Exception, request: Any) -> Rejected:
        """The refusal as a result, and a line in the rejections audit table (unless the
        database is what failed: then there is nowhere to write it)."""
        refusal = rejected(exc)
        if not isinstance(exc, LogUnavailable):
            try:
                self.rejections.record(
                    actor,
                    operation,
                    refusal.error_code,
                    refusal.message,
                    request,
                    refusal.details,
                    sealing(self._snapshot, request, operation),  # its personal values, sealed
                )
            except Exception as failed:  # a full disk: the refusal is still the answer
                if (fault := self.log.fault(failed)) is None:
                    raise
                _log.warning("a refusal of %s was not recorded: %s", operation, fault)
        return refusal


def _as(kind: type[Res], result: ItemResult) -> Res | ProposedResult:
    if not isinstance(result, (kind, ProposedResult)):
        raise TypeError(f"expected a {kind.__name__}, the events made a {type(result).__name__}")
    return result


_SCHEMA_ATTEMPTS = 3
Decide = Callable[[Transaction], None]


class _StaleSchema(Exception):
    """The schema snapshot a write was planned against is no longer the log's newest."""


def _while_current(
    snapshot: LoadedSchema, decide: Decide, cached: Callable[[], LoadedSchema]
) -> Decide:
    """``decide``, refused before it emits anything if the log holds a schema this gate has
    not loaded — one probe of the ``schema`` stream in the write transaction. A write
    planned against the snapshot that a refresh has since replaced still completes against
    it (seed 000's in-flight rule): what it may not do is miss a schema another process
    published."""
    loaded_at = snapshot.stream_version
    if loaded_at is None:  # a file or graph schema: not the log's to check
        return decide

    def checked(tx: Transaction) -> None:
        newest = tx.stream_version(SCHEMA_STREAM)
        if newest != loaded_at and newest != cached().stream_version:
            raise _StaleSchema
        decide(tx)

    return checked


class _DryRun(Exception):
    """A rehearsal's events (its one argument), carried out of the transaction it undoes."""


__all__ = ["OPERATIONS", "ItemResult", "Operation", "Refusing", "WriteGuard", "Writer"]
