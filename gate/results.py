"""What a write returns, built from the events it appended (and nothing else).

Because results come from events alone, an idempotent retry — which reads the events of
the first attempt back from the log — returns the identical result. A refusal is a value
(``Rejected``), never an exception, so every transport returns it the same way; a batch
item's refusal names its item (``ItemRefusal``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from writegate.eventlog import Event, IdempotencyKeyReused, LogUnavailable, VersionConflict
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import (
    BatchResult,
    DeleteNodeResult,
    DeleteRelationshipResult,
    ItemResult,
    NodeRef,
    ProposedResult,
    Rejected,
    WriteNodeResult,
    WriteRelationshipResult,
)
from writegate.language import (
    GraphPayload,
    NodeCorroborated,
    NodeDeleted,
    NodeWritten,
    RelationshipCorroborated,
    RelationshipDeleted,
    RelationshipWritten,
    WriteProposed,
    payload_of,
    provenance_of,
)
from writegate.language import NodeRef as PayloadRef

_Sequenced = WriteNodeResult | WriteRelationshipResult

# the failures an operation turns into a ``Rejected`` result
REFUSALS = (GateRejection, VersionConflict, IdempotencyKeyReused, LogUnavailable)


def _ref(ref: PayloadRef) -> NodeRef:
    return NodeRef(label=ref.label, merge_keys=ref.keys)


def _parsed(identity: str) -> NodeRef:
    return _ref(PayloadRef.parse(identity))


def result_of(events: Sequence[Event]) -> ItemResult:
    """The result of one operation from the events it appended (the last one names it)."""
    last = events[-1]
    provenance = provenance_of(last)
    if provenance is None:
        raise ValueError(f"event {last.seq} is not a write (no provenance)")
    common = {
        "write_gate_version": provenance.write_gate_version,
        "seq": last.seq,
        "event_id": last.event_id,
    }
    match payload_of(last):
        case NodeWritten() as written:
            return WriteNodeResult(
                **common,
                label=written.node.label,
                merge_keys=written.node.keys,
                confidence=provenance.confidence,
                remapped_from=written.node.remapped_from,
                created=written.created,
                version=last.streams[written.node.stream],
                schema_version=provenance.schema_version,
                superseded=written.superseded or [],
                resolved_from=written.resolved_from,
                unknown_properties=written.unknown_properties or [],
            )
        case RelationshipWritten() as written:
            return WriteRelationshipResult(
                **common,
                type=written.type,
                from_node=_ref(written.from_node),
                to_node=_ref(written.to_node),
                confidence=provenance.confidence,
                remapped_from=written.remapped_from,
                stubs_created=[_ref(s) for s in written.stubs_created],
                created=written.created,
                version=last.streams[written.stream],
                schema_version=provenance.schema_version,
                superseded=written.superseded or [],
                resolved_from=written.resolved_from,
                unknown_properties=written.unknown_properties or [],
            )
        case NodeCorroborated() as heard:
            return WriteNodeResult(
                **common,
                status="corroborated",
                label=heard.node.label,
                merge_keys=heard.node.keys,
                confidence=provenance.confidence,
                remapped_from=heard.node.remapped_from,
                created=False,
                version=heard.version,
                schema_version=provenance.schema_version,
                resolved_from=heard.resolved_from,
                corroborated_confidence=heard.corroborated_confidence,
            )
        case RelationshipCorroborated() as heard:
            return WriteRelationshipResult(
                **common,
                status="corroborated",
                type=heard.type,
                from_node=_parsed(heard.from_identity),
                to_node=_parsed(heard.to_identity),
                confidence=provenance.confidence,
                remapped_from=None,
                stubs_created=[],
                created=False,
                version=heard.version,
                schema_version=provenance.schema_version,
                resolved_from=heard.resolved_from,
                corroborated_confidence=heard.corroborated_confidence,
            )
        case NodeDeleted() as deleted:
            return DeleteNodeResult(
                **common,
                label=deleted.node.label,
                merge_keys=deleted.node.keys,
                relationships_deleted=len(deleted.detached),
                version=last.streams[deleted.node.stream],
            )
        case WriteProposed() as proposed:
            return ProposedResult(
                **common,
                proposal=proposed.proposal,
                reason=proposed.reason,
                confidence=provenance.confidence,
            )
        case RelationshipDeleted() as deleted:
            return DeleteRelationshipResult(
                **common,
                type=deleted.type,
                from_node=_parsed(deleted.from_identity),
                to_node=_parsed(deleted.to_identity),
                version=last.streams[deleted.stream],
            )
    raise ValueError(f"no result shape for event type {last.type!r}")


def batch_result(
    events: Sequence[Event], unchanged: Mapping[int, ItemResult] | None = None
) -> BatchResult:
    """One result per batch item, from the events each item appended, or for an item that
    changed nothing its ``unchanged`` answer (a batch appending nothing spans the seqs of
    the events its answers name)."""
    by_item: dict[int, list[Event]] = {}
    for event in events:
        payload = payload_of(event)
        if isinstance(payload, GraphPayload | WriteProposed) and payload.batch_item is not None:
            by_item.setdefault(payload.batch_item, []).append(event)
    quiet = dict(unchanged or {})
    results = [
        quiet[index] if index in quiet else result_of(by_item[index])
        for index in sorted({*by_item, *quiet})
    ]
    seqs = [e.seq for e in events] or [r.seq for r in results if isinstance(r, _Sequenced)]
    outcomes = Counter(r.status for r in results)
    return BatchResult(
        status=next(iter(outcomes)) if len(outcomes) == 1 else "mixed",
        outcomes=dict(outcomes),
        results=results,
        first_seq=seqs[0] if events else min(seqs),
        last_seq=seqs[-1] if events else max(seqs),
        resolved=sum(1 for r in results if isinstance(r, WriteNodeResult) and r.resolved_from),
    )


def conflict_details(exc: VersionConflict) -> dict[str, object]:
    return {"stream": exc.stream, "expected_version": exc.expected, "current_version": exc.current}


def rejected(exc: Exception) -> Rejected:
    """A refusal (one of ``REFUSALS``) as the seed's rejection shape."""
    if isinstance(exc, GateRejection):
        return Rejected(error_code=exc.code, message=exc.message, details=exc.details)
    if isinstance(exc, VersionConflict):
        return Rejected(
            error_code=ErrorCode.VERSION_CONFLICT, message=str(exc), details=conflict_details(exc)
        )
    if isinstance(exc, IdempotencyKeyReused):
        return Rejected(error_code=ErrorCode.IDEMPOTENCY_KEY_REUSED, message=str(exc))
    if isinstance(exc, LogUnavailable):
        details = {"cause": exc.cause} if exc.cause else {}
        return Rejected(error_code=ErrorCode.LOG_UNAVAILABLE, message=str(exc), details=details)
    raise exc


class ItemRefusal:
    """Re-label a refusal raised while handling batch item ``index``."""

    def __init__(self, index: int, item: Any) -> None:
        self.index = index
        self.op = item.get("op") if isinstance(item, dict) else None

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, GateRejection):
            raise GateRejection(
                exc.code,
                f"item {self.index} ({self.op}): {exc.message}",
                {"item": self.index, "op": self.op, **exc.details},
            ) from exc
        if isinstance(exc, VersionConflict):
            raise GateRejection(
                ErrorCode.VERSION_CONFLICT,
                f"item {self.index} ({self.op}): {exc}",
                {"item": self.index, "op": self.op, **conflict_details(exc)},
            ) from exc
