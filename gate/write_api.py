"""The gate's write operations as typed Python methods: one per operation, each the path
its call takes (``Writer.single``/``batch``), and ``call`` — the same path for arguments
exactly as an agent sent them (the MCP tools), by operation name. ``Gate`` has them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from writegate.eventlog import Actor
from writegate.eventlog.events import format_timestamp
from writegate.gate.errors import ErrorCode
from writegate.gate.merges.operations import MergeResult, Merges, UnmergeResult
from writegate.gate.models import (
    BatchResult,
    DeleteNodeResult,
    DeleteRelationshipResult,
    ProposedResult,
    Rejected,
    WriteNodeResult,
    WriteRelationshipResult,
)
from writegate.gate.observations import ObservationResult, Observations
from writegate.gate.writing import (
    DELETE_NODE,
    DELETE_RELATIONSHIP,
    OPERATIONS,
    WRITE_NODE,
    WRITE_RELATIONSHIP,
    WriteGuard,
    Writer,
)


class WriteOperations:
    """The typed write methods, over the gate's ``writer`` as ``default_actor``."""

    writer: Writer
    default_actor: Actor

    def write_node(
        self,
        *,
        label: str,
        merge_keys: Mapping[str, Any],
        source: str,
        extraction_method: str,
        properties: Mapping[str, Any] | None = None,
        reliability: float | None = None,
        if_version: int | None = None,
        create_only: bool | None = None,
        resolution: str | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        observations: Sequence[str] | None = None,
        scope: str | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
        guard: WriteGuard | None = None,
    ) -> WriteNodeResult | ProposedResult | Rejected:
        """Create or update (merge) one node on its canonical label and merge keys;
        ``observations`` are the ids of the observations it was extracted from; ``scope``
        one its label allows (``gate.scopes``: naming another than its own moves it)."""
        arguments = _given(
            label=label,
            merge_keys=merge_keys,
            properties=properties,
            source=source,
            extraction_method=extraction_method,
            reliability=reliability,
            if_version=if_version,
            create_only=create_only,
            resolution=resolution,
            valid_from=_moment(valid_from),
            valid_to=_moment(valid_to),
            observations=list(observations) if observations is not None else None,
            scope=scope,
            idempotency_key=idempotency_key,
        )
        return self.writer.single(WRITE_NODE, arguments, actor or self.default_actor, guard)

    def write_relationship(
        self,
        *,
        type: str,
        from_label: str,
        from_keys: Mapping[str, Any],
        to_label: str,
        to_keys: Mapping[str, Any],
        source: str,
        extraction_method: str,
        properties: Mapping[str, Any] | None = None,
        endpoint_policy: str | None = None,
        reliability: float | None = None,
        if_version: int | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        observations: Sequence[str] | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
        guard: WriteGuard | None = None,
    ) -> WriteRelationshipResult | ProposedResult | Rejected:
        """Create or update one relationship between two nodes named by label and keys;
        ``observations`` are the ids of the observations it was extracted from."""
        arguments = _given(
            type=type,
            from_label=from_label,
            from_keys=from_keys,
            to_label=to_label,
            to_keys=to_keys,
            properties=properties,
            endpoint_policy=endpoint_policy,
            source=source,
            extraction_method=extraction_method,
            reliability=reliability,
            if_version=if_version,
            valid_from=_moment(valid_from),
            valid_to=_moment(valid_to),
            observations=list(observations) if observations is not None else None,
            idempotency_key=idempotency_key,
        )
        return self.writer.single(WRITE_RELATIONSHIP, arguments, actor or self.default_actor, guard)

    def delete_node(
        self,
        *,
        label: str,
        merge_keys: Mapping[str, Any],
        source: str,
        extraction_method: str,
        detach: bool | None = None,
        reliability: float | None = None,
        if_version: int | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
        guard: WriteGuard | None = None,
    ) -> DeleteNodeResult | Rejected:
        """Delete one node (an event; history keeps it); ``detach`` its relationships too."""
        arguments = _given(
            label=label,
            merge_keys=merge_keys,
            detach=detach,
            source=source,
            extraction_method=extraction_method,
            reliability=reliability,
            if_version=if_version,
            idempotency_key=idempotency_key,
        )
        return self.writer.deletion(DELETE_NODE, arguments, actor or self.default_actor, guard)

    def delete_relationship(
        self,
        *,
        type: str,
        from_label: str,
        from_keys: Mapping[str, Any],
        to_label: str,
        to_keys: Mapping[str, Any],
        source: str,
        extraction_method: str,
        reliability: float | None = None,
        if_version: int | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
        guard: WriteGuard | None = None,
    ) -> DeleteRelationshipResult | Rejected:
        """Delete one relationship (an event; history keeps it)."""
        arguments = _given(
            type=type,
            from_label=from_label,
            from_keys=from_keys,
            to_label=to_label,
            to_keys=to_keys,
            source=source,
            extraction_method=extraction_method,
            reliability=reliability,
            if_version=if_version,
            idempotency_key=idempotency_key,
        )
        return self.writer.deletion(
            DELETE_RELATIONSHIP, arguments, actor or self.default_actor, guard
        )

    def record_observation(
        self,
        *,
        text: str,
        source: str,
        extraction_method: str,
        reliability: float | None = None,
        said_at: datetime | None = None,
        session: str | None = None,
        scope: str | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
        guard: WriteGuard | None = None,
        observations: Sequence[str] | None = None,
    ) -> ObservationResult | Rejected:
        """Keep the text an agent read or heard as an observation (``gate.observations``):
        its id, which writes cite, is its content's, so recording it again is ``unchanged``;
        ``scope`` is the one it is kept in (default: the implicit one); ``observations``
        the ones it was extracted from (its authority is no higher: ``gate.authority``)."""
        arguments = _given(
            text=text,
            source=source,
            extraction_method=extraction_method,
            reliability=reliability,
            said_at=_moment(said_at),
            session=session,
            scope=scope,
            idempotency_key=idempotency_key,
            observations=list(observations) if observations else None,
        )
        actor = actor or self.default_actor
        return Observations(self.writer).record_observation(arguments, actor, guard)

    def write_batch(
        self,
        *,
        items: Any,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
        guard: WriteGuard | None = None,
        dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> BatchResult | Rejected:
        """Several writes accepted or rejected as one; a rejection names the failing item.

        ``dry_run`` runs every check, inside the transaction too, then rolls back: the
        result says what would have been written (its ``seq`` values are hypothetical).
        ``progress(done, total)`` hears of the items written so far (a terminal's bar).
        """
        actor = actor or self.default_actor
        return self.writer.batch(
            items, idempotency_key, actor, guard, dry_run=dry_run, progress=progress
        )

    def merge_nodes(
        self,
        *,
        label: str,
        survivor_keys: Mapping[str, Any],
        duplicate_keys: Mapping[str, Any],
        source: str,
        extraction_method: str,
        duplicate_label: str | None = None,
        reason: str | None = None,
        reliability: float | None = None,
        if_version: int | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
    ) -> MergeResult | Rejected:
        """Fold a duplicate into a survivor of its label (``gate.merges.operations``); undo with
        ``unmerge_nodes`` and the result's ``merge``."""
        arguments = _given(
            label=label,
            survivor_keys=survivor_keys,
            duplicate_keys=duplicate_keys,
            duplicate_label=duplicate_label,
            source=source,
            extraction_method=extraction_method,
            reason=reason,
            reliability=reliability,
            if_version=if_version,
            idempotency_key=idempotency_key,
        )
        return Merges(self.writer).merge_nodes(arguments, actor or self.default_actor)

    def unmerge_nodes(
        self,
        *,
        merge: str,
        source: str,
        extraction_method: str,
        reason: str | None = None,
        reliability: float | None = None,
        if_version: int | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
    ) -> UnmergeResult | Rejected:
        """Undo one merge: the duplicate, its relationships and who set each value return."""
        arguments = _given(
            merge=merge,
            source=source,
            extraction_method=extraction_method,
            reason=reason,
            reliability=reliability,
            if_version=if_version,
            idempotency_key=idempotency_key,
        )
        return Merges(self.writer).unmerge_nodes(arguments, actor or self.default_actor)

    def call(
        self,
        operation: str,
        arguments: Mapping[str, Any],
        *,
        actor: Actor | None = None,
        guard: WriteGuard | None = None,
    ) -> BaseModel:
        """Run a write operation on its arguments exactly as an agent sent them.

        The entry point of the tools: ``actor`` and ``guard`` come from the transport,
        so an argument of the same name is just an unknown argument (``INVALID_ARGUMENT``).
        """
        actor = actor or self.default_actor
        if operation == "write_batch":
            if extra := sorted(set(arguments) - {"items", "idempotency_key"}):
                return Rejected(
                    error_code=ErrorCode.INVALID_ARGUMENT,
                    message=f"write_batch takes items and idempotency_key, not {extra}",
                    details={"field": extra[0]},
                )
            return self.writer.batch(
                arguments.get("items"), arguments.get("idempotency_key"), actor, guard
            )
        if operation not in OPERATIONS:
            raise ValueError(f"no gate operation {operation!r}")
        return self.writer.single(OPERATIONS[operation], arguments, actor, guard)


def _moment(value: datetime | None) -> str | None:
    """A time as agents send it (ISO 8601): the request is stored as JSON."""
    return format_timestamp(value) if value is not None else None


def _given(**arguments: Any) -> dict[str, Any]:
    """The arguments a Python caller gave (None: left to the operation's default)."""
    return {name: value for name, value in arguments.items() if value is not None}
