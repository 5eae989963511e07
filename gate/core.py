"""The Write Gate: validate against the schema, compute provenance, append — or reject.

Every operation has the same shape: parse the arguments (``INVALID_ARGUMENT``),
run the stateless checks against one schema snapshot, then open one write
transaction in which the stateful checks run and the events are emitted. Any
rejection on the way appends nothing. Results are built from the appended
events alone, which is why an idempotent retry returns the identical result.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from writegate.eventlog import (
    Actor,
    DraftEvent,
    Event,
    EventLog,
    IdempotencyKeyReused,
    Transaction,
    VersionConflict,
    canonical_json,
)
from writegate.eventlog.store import Durability
from writegate.gate import checks
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.formula import (
    FormulaProvider,
    compute_confidence,
    formula_name,
    load_formula_provider,
)
from writegate.gate.integrity import IntegrityReport, check_integrity
from writegate.gate.limits import DEFAULT_LIMITS, Limits, check_request
from writegate.gate.models import (
    BATCH_OPERATIONS,
    MAX_BATCH,
    BatchResult,
    DeleteNodeRequest,
    DeleteNodeResult,
    DeleteRelationshipRequest,
    DeleteRelationshipResult,
    ItemResult,
    NodeRef,
    Provenanced,
    PublishResult,
    RefreshResult,
    Rejected,
    WriteNodeRequest,
    WriteNodeResult,
    WriteRelationshipRequest,
    WriteRelationshipResult,
    parse_request,
)
from writegate.gate.rejections import RejectionLog
from writegate.gate.schema import (
    FileSchemaSource,
    LoadedSchema,
    LogSchemaSource,
    Schema,
    SchemaCache,
    SchemaDocument,
    SchemaDocumentError,
    SchemaSource,
    SchemaSourceUnavailable,
    load_document,
    parse_document,
)
from writegate.gate.schema.registry import relationship_types
from writegate.gate.version import __version__
from writegate.projections.state import StateProjection
from writegate.projections.vocabulary import (
    NODE_DELETED,
    NODE_WRITTEN,
    RELATIONSHIP_DELETED,
    RELATIONSHIP_WRITTEN,
    SCHEMA_PUBLISHED,
    node_ref,
    node_stream,
    parse_node_identity,
    relationship_identity,
    relationship_stream,
)

POLICY_ENV = "WRITE_GATE_UNKNOWN_LABEL_POLICY"
POLICIES = ("remap", "reject")
R = TypeVar("R", bound=BaseModel)
# emits one operation's events; the int is the batch item index (None outside a batch)
Emitter = Callable[[Transaction, int | None], None]
# stateless checks of one parsed request against a snapshot, returning its emitter
Planner = Callable[[Any, LoadedSchema, Mapping[str, Any]], Emitter]
# the last word on what an actor may append: sees the exact events a write would add and
# raises GateRejection(POLICY_DENIED) to refuse them all (the transaction rolls back)
WriteGuard = Callable[[Actor, Sequence[Event]], None]


@dataclass(frozen=True)
class _Endpoint:
    ref: dict[str, Any]  # payload-style node reference
    entry_label: str


class Gate:
    """The gate over one log. Thread-safe; share one per process."""

    def __init__(
        self,
        log: EventLog,
        schema: SchemaSource | SchemaCache | None = None,
        *,
        formula: FormulaProvider | str | None = None,
        unknown_label_policy: str | None = None,
        default_actor: Actor | None = None,
        limits: Limits | None = None,
    ) -> None:
        states = [p for p in log.inline if isinstance(p, StateProjection)]
        if not states:
            raise ValueError("the gate needs a log opened with the StateProjection inline")
        self.log = log
        self.state = states[0]
        if schema is None:
            schema = LogSchemaSource(log)
        self.schema = schema if isinstance(schema, SchemaCache) else SchemaCache(schema)
        self.formula = (
            formula
            if formula is not None and not isinstance(formula, str)
            else load_formula_provider(formula or os.environ.get("WRITE_GATE_FORMULA_PROVIDER"))
        )
        self.formula_name = formula_name(self.formula)
        self._policy_override = _policy(unknown_label_policy, "unknown_label_policy")
        self._policy_env = _policy(os.environ.get(POLICY_ENV), POLICY_ENV)
        self.default_actor = default_actor or Actor(agent="python-api")
        self._limits = limits
        self.rejections = RejectionLog(log)
        self._singles = self._operations()  # built once: every write looks its operation up

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        create: bool = True,
        schema_file: str | Path | None = None,
        formula: FormulaProvider | str | None = None,
        unknown_label_policy: str | None = None,
        durability: Durability = "normal",
        default_actor: Actor | None = None,
        limits: Limits | None = None,
        readonly: bool = False,
    ) -> Gate:
        """Open (or create) the log at ``path`` with its state read model; schemas come from the
        log unless ``schema_file`` names a document on disk. ``readonly`` opens an existing log
        without writing anything to its file (an auditor's copy): reads work, writes fail."""
        log = EventLog(
            path,
            inline=[StateProjection()],
            create=create,
            durability=durability,
            readonly=readonly,
        )
        source: SchemaSource = (
            FileSchemaSource(schema_file) if schema_file else LogSchemaSource(log)
        )
        return cls(
            log,
            source,
            formula=formula,
            unknown_label_policy=unknown_label_policy,
            default_actor=default_actor,
            limits=limits,
        )

    def close(self) -> None:
        self.log.close()

    def __enter__(self) -> Gate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def verify(
        self,
        *,
        checkpoints: Mapping[str, int] | None = None,
        expect_head: tuple[int, str] | None = None,
    ) -> IntegrityReport:
        """Chain, triggers, state, projection checkpoints, an anchor: see ``gate.integrity``."""
        return check_integrity(
            self.log, self.state, checkpoints=checkpoints, expect_head=expect_head
        )

    # -- schema ----------------------------------------------------------------------

    def limits(self) -> Limits:
        """Explicit setting > the schema document's ``limits`` > the defaults."""
        if self._limits is not None:
            return self._limits
        try:
            snapshot = self.schema.current()
        except SchemaSourceUnavailable:
            return DEFAULT_LIMITS
        return snapshot.limits or DEFAULT_LIMITS

    def unknown_label_policy(self, snapshot: LoadedSchema | None = None) -> str:
        """Explicit setting > WRITE_GATE_UNKNOWN_LABEL_POLICY > the schema's own > remap."""
        document = snapshot.unknown_label_policy if snapshot else None
        return self._policy_override or self._policy_env or document or "remap"

    def refresh_schema_cache(self) -> RefreshResult | Rejected:
        """Reload the schema from its source and swap it in; on failure keep the old one."""
        try:
            snapshot = self.schema.refresh()
        except SchemaSourceUnavailable as exc:
            return _rejected(_unavailable(exc, self.schema.has_snapshot))
        registry = snapshot.registry
        types = relationship_types(registry)
        return RefreshResult(
            loaded=len(registry.all_canonical_labels()),
            relationship_types=len(types),
            schema_version=snapshot.version,
            source=self.schema.source.describe(),
        )

    def current_schema(self) -> LoadedSchema:
        """The snapshot writes are checked against now (loading it on first use)."""
        return self.schema.current()

    def publish_schema(
        self,
        document: SchemaDocument | Mapping[str, Any] | str | Path,
        *,
        actor: Actor | None = None,
    ) -> PublishResult | Rejected:
        """Append a schema to the log (``schema.published``); writes use it after a refresh."""
        try:
            doc = _as_document(document)
        except SchemaDocumentError as exc:
            return Rejected(error_code=ErrorCode.SCHEMA_INVALID, message=str(exc))
        schema = Schema(doc)
        payload = {
            "document": doc.model_dump(mode="json", by_alias=True),
            "version": schema.version,
        }
        outcome_seq: list[int] = []

        def decide(tx: Transaction) -> None:
            latest = tx.conn.execute(
                "SELECT json_extract(payload, '$.version') FROM events WHERE type = ? "
                "ORDER BY seq DESC LIMIT 1",
                (SCHEMA_PUBLISHED,),
            ).fetchone()
            if latest is None or latest[0] != schema.version:
                outcome_seq.append(
                    tx.emit(
                        DraftEvent(type=SCHEMA_PUBLISHED, streams=("schema",), payload=payload)
                    ).seq
                )

        self.log.append(actor or self.default_actor, decide)
        return PublishResult(
            status="published" if outcome_seq else "unchanged",
            schema_version=schema.version,
            labels=len(doc.nodes),
            relationship_types=len(doc.relationships),
            seq=outcome_seq[0] if outcome_seq else None,
        )

    # -- the write operations ----------------------------------------------------------

    def write_node(
        self, *, actor: Actor | None = None, guard: WriteGuard | None = None, **arguments: Any
    ) -> WriteNodeResult | Rejected:
        result = self.call("write_node", arguments, actor=actor, guard=guard)
        return cast(WriteNodeResult | Rejected, result)

    def write_relationship(
        self, *, actor: Actor | None = None, guard: WriteGuard | None = None, **arguments: Any
    ) -> WriteRelationshipResult | Rejected:
        result = self.call("write_relationship", arguments, actor=actor, guard=guard)
        return cast(WriteRelationshipResult | Rejected, result)

    def delete_node(
        self, *, actor: Actor | None = None, guard: WriteGuard | None = None, **arguments: Any
    ) -> DeleteNodeResult | Rejected:
        result = self.call("delete_node", arguments, actor=actor, guard=guard)
        return cast(DeleteNodeResult | Rejected, result)

    def delete_relationship(
        self, *, actor: Actor | None = None, guard: WriteGuard | None = None, **arguments: Any
    ) -> DeleteRelationshipResult | Rejected:
        result = self.call("delete_relationship", arguments, actor=actor, guard=guard)
        return cast(DeleteRelationshipResult | Rejected, result)

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
        arguments = dict(arguments)
        if operation == "write_batch":
            if extra := sorted(set(arguments) - {"items", "idempotency_key"}):
                return Rejected(
                    error_code=ErrorCode.INVALID_ARGUMENT,
                    message=f"write_batch takes items and idempotency_key, not {extra}",
                    details={"field": extra[0]},
                )
            return self.write_batch(
                items=arguments.get("items"),
                idempotency_key=arguments.get("idempotency_key"),
                actor=actor,
                guard=guard,
            )
        singles = self._singles
        if operation not in singles:
            raise ValueError(f"no gate operation {operation!r}")
        model, plan, result_type = singles[operation]
        return self._single(model, plan, arguments, actor, result_type, guard, operation)

    def write_batch(
        self,
        *,
        items: Any,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
        guard: WriteGuard | None = None,
        dry_run: bool = False,
    ) -> BatchResult | Rejected:
        """Several writes accepted or rejected as one; a rejection names the failing item.

        ``dry_run`` runs every check, inside the transaction too, then rolls back: the
        result says what would have been written (its ``seq`` values are hypothetical).
        """
        actor = actor or self.default_actor
        request = {"items": items, "idempotency_key": idempotency_key}
        try:
            check_request(request, self.limits())
            key = _idempotency_key(idempotency_key)
            if not isinstance(items, list) or not 1 <= len(items) <= MAX_BATCH:
                raise GateRejection(
                    ErrorCode.INVALID_ARGUMENT,
                    f"items must be a list of 1 to {MAX_BATCH} operations",
                    {"field": "items"},
                )
            _json_safe(request)
            if (
                key is not None
                and (earlier := self.log.earlier_append(actor, key, request)) is not None
            ):
                return _batch_result(earlier)
            snapshot = self._snapshot()
            emitters: list[Emitter] = []
            for index, item in enumerate(items):
                with _item(index, item):
                    model, plan = self._batch_op(item)
                    arguments = {k: v for k, v in item.items() if k != "op"}
                    if "idempotency_key" in arguments:
                        raise GateRejection(
                            ErrorCode.INVALID_ARGUMENT,
                            "batch items may not carry their own idempotency_key",
                            {"field": "idempotency_key"},
                        )
                    emitters.append(plan(parse_request(model, arguments), snapshot, item))

            def decide(tx: Transaction) -> None:
                for index, (emit, item) in enumerate(zip(emitters, items, strict=True)):
                    with _item(index, item):
                        emit(tx, index)
                if guard is not None:
                    guard(actor, tx.events)
                if dry_run:
                    raise _DryRun(list(tx.events))

            try:
                outcome = self.log.append(actor, decide, idempotency_key=key, request=request)
            except _DryRun as rehearsal:
                return _batch_result(rehearsal.events)
            return _batch_result(outcome.events)
        except (GateRejection, VersionConflict, IdempotencyKeyReused) as exc:
            if dry_run:
                return _rejected(exc)
            return self._refused(actor, "write_batch", exc, request)

    # -- plumbing shared by the single operations -----------------------------------------

    def _single(
        self,
        model: type[Provenanced],
        plan: Planner,
        arguments: dict[str, Any],
        actor: Actor | None,
        result_type: type[R],
        guard: WriteGuard | None,
        operation: str,
    ) -> R | Rejected:
        actor = actor or self.default_actor
        try:
            check_request(arguments, self.limits())
            key = _idempotency_key(arguments.pop("idempotency_key", None))
            request = parse_request(model, arguments)
            raw = {**arguments, **({"idempotency_key": key} if key is not None else {})}
            _json_safe(raw)
            if (
                key is not None
                and (earlier := self.log.earlier_append(actor, key, raw)) is not None
            ):
                return result_type.model_validate(_result_fields(earlier))
            emit = plan(request, self._snapshot(), raw)

            def decide(tx: Transaction) -> None:
                emit(tx, None)
                if guard is not None:
                    guard(actor, tx.events)

            outcome = self.log.append(actor, decide, idempotency_key=key, request=raw)
            return result_type.model_validate(_result_fields(outcome.events))
        except (GateRejection, VersionConflict, IdempotencyKeyReused) as exc:
            return self._refused(actor, operation, exc, arguments)

    def _refused(self, actor: Actor, operation: str, exc: Exception, request: Any) -> Rejected:
        """The rejection as a result, and a line in the rejections audit table."""
        rejected = _rejected(exc)
        self.rejections.record(actor, operation, rejected.error_code, rejected.message, request)
        return rejected

    def _snapshot(self) -> LoadedSchema:
        try:
            return self.schema.current()
        except SchemaSourceUnavailable as exc:
            raise _unavailable(exc, False) from exc

    def _operations(self) -> dict[str, tuple[type[Provenanced], Planner, type[BaseModel]]]:
        """Each single operation: its request model, its planner, its result model."""
        return {
            "write_node": (WriteNodeRequest, self._plan_write_node, WriteNodeResult),
            "write_relationship": (
                WriteRelationshipRequest,
                self._plan_write_relationship,
                WriteRelationshipResult,
            ),
            "delete_node": (DeleteNodeRequest, self._plan_delete_node, DeleteNodeResult),
            "delete_relationship": (
                DeleteRelationshipRequest,
                self._plan_delete_relationship,
                DeleteRelationshipResult,
            ),
        }

    def _batch_op(self, item: Any) -> tuple[type[Provenanced], Planner]:
        if not isinstance(item, dict) or item.get("op") not in BATCH_OPERATIONS:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                f"each item must be an object whose 'op' is one of {list(BATCH_OPERATIONS)}",
                {"field": "op"},
            )
        model, plan, _ = self._singles[item["op"]]
        return model, plan

    def _provenance(self, request: Provenanced, snapshot: LoadedSchema) -> dict[str, Any]:
        return {
            "source": request.source,
            "extraction_method": request.extraction_method,
            "reliability": request.reliability,
            "confidence": compute_confidence(
                self.formula, request.reliability, request.extraction_method
            ),
            "formula": self.formula_name,
            "write_gate_version": __version__,
            "schema_version": snapshot.version,
        }

    def _endpoint(
        self, label: str, keys: Mapping[str, Any], snapshot: LoadedSchema, end: str
    ) -> _Endpoint:
        resolved = checks.resolve_label(
            label, snapshot.registry, self.unknown_label_policy(snapshot), f"{end}_label"
        )
        if not keys:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                f"{end}_keys must identify the node",
                {"field": f"{end}_keys"},
            )
        checks.check_keys(keys, resolved.entry, f"{end}_keys")
        return _Endpoint(node_ref(resolved.label, keys, resolved.remapped_from), resolved.label)

    def _relationship_target(
        self, request: WriteRelationshipRequest | DeleteRelationshipRequest, snapshot: LoadedSchema
    ) -> tuple[checks.ResolvedType, _Endpoint, _Endpoint, str]:
        rtype = checks.resolve_type(request.type, snapshot.registry)
        start = self._endpoint(request.from_label, request.from_keys, snapshot, "from")
        end = self._endpoint(request.to_label, request.to_keys, snapshot, "to")
        for side, endpoint, allowed in (
            ("from", start, rtype.entry.from_labels),
            ("to", end, rtype.entry.to_labels),
        ):
            if allowed and endpoint.entry_label not in allowed:
                raise GateRejection(
                    ErrorCode.SCHEMA_ENDPOINT_LABEL_NOT_ALLOWED,
                    f"{rtype.type} may not start/end at {endpoint.entry_label} ({side} must be one "
                    f"of {list(allowed)})",
                    {
                        "type": rtype.type,
                        "end": side,
                        "label": endpoint.entry_label,
                        "allowed": list(allowed),
                    },
                )
        identity = relationship_identity(rtype.type, start.ref["identity"], end.ref["identity"])
        return rtype, start, end, identity

    # -- planning: stateless checks now, an emitter for the transaction later -----------

    def _plan_write_node(
        self, request: WriteNodeRequest, snapshot: LoadedSchema, raw: Mapping[str, Any]
    ) -> Emitter:
        checks.check_names(request.merge_keys, "merge_keys")
        checks.check_names(request.properties, "properties")
        provenance = self._provenance(request, snapshot)
        resolved = checks.resolve_label(
            request.label, snapshot.registry, self.unknown_label_policy(snapshot)
        )
        entry = resolved.entry
        keys = request.merge_keys
        if keys:  # keys that name other properties than the declared ones: say so first
            checks.check_keys(keys, entry, "merge_keys")
        checks.check_properties(
            request.properties, entry.properties, entry.additional_properties, resolved.label
        )
        changes = checks.reconcile_keys_and_properties(keys, request.properties, "merge_keys")
        required = list(dict.fromkeys([*entry.merge_keys, *entry.required_properties]))
        statically_missing = checks.missing_required(required, keys, changes, {})
        if not keys and statically_missing:  # seed 000 row 6: nothing names the node
            raise _missing(resolved.label, statically_missing, required, "request")
        if not keys:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                "merge_keys must not be empty: they are the node's identity",
                {"field": "merge_keys"},
            )
        ref = node_ref(resolved.label, keys, resolved.remapped_from)
        stream = node_stream(ref["identity"])
        expected = {stream: request.if_version} if request.if_version is not None else {}
        request_json = dict(raw)

        create_only = request.create_only

        def emit(tx: Transaction, item: int | None) -> None:
            existing = self.state.node(tx.conn, ref["identity"])
            if create_only and existing is not None and not existing.stub:
                raise GateRejection(
                    ErrorCode.NODE_ALREADY_EXISTS,
                    f"{ref['identity']} already exists (version {existing.version}); "
                    "change it with an update, or write_node without create_only",
                    {"label": ref["label"], "keys": ref["keys"], "version": existing.version},
                )
            if statically_missing:
                still = checks.missing_required(
                    statically_missing, keys, changes, existing.properties if existing else {}
                )
                if still:
                    raise _missing(resolved.label, still, required)
            payload = {
                "node": ref,
                "properties": changes,
                "created": existing is None,
                "stub_resolved": bool(existing and existing.stub),
            }
            tx.emit(
                _draft(NODE_WRITTEN, (stream,), payload, provenance, request_json, expected, item)
            )

        return emit

    def _plan_write_relationship(
        self, request: WriteRelationshipRequest, snapshot: LoadedSchema, raw: Mapping[str, Any]
    ) -> Emitter:
        checks.check_names(request.from_keys, "from_keys")
        checks.check_names(request.to_keys, "to_keys")
        checks.check_names(request.properties, "properties")
        provenance = self._provenance(request, snapshot)
        rtype, start, end, identity = self._relationship_target(request, snapshot)
        entry = rtype.entry
        checks.check_properties(
            request.properties, entry.properties, entry.additional_properties, rtype.type
        )
        changes = dict(request.properties)
        statically_missing = checks.missing_required(entry.required_properties, {}, changes, {})
        stream = relationship_stream(identity)
        expected = {stream: request.if_version} if request.if_version is not None else {}
        merge = request.endpoint_policy == "merge_endpoints"
        request_json = dict(raw)

        def emit(tx: Transaction, item: int | None) -> None:
            absent = []
            for side, endpoint in (("from", start), ("to", end)):
                ref = endpoint.ref
                if not self.state.node_exists(tx.conn, ref["identity"]) and ref not in absent:
                    absent.append(ref)
                    if not merge:
                        raise GateRejection(
                            ErrorCode.ENDPOINT_NOT_FOUND,
                            f"{side} node {ref['identity']} does not exist (write it first, or "
                            "use endpoint_policy='merge_endpoints')",
                            {"end": side, "label": ref["label"], "keys": ref["keys"]},
                        )
            exists = self.state.relationship_exists(tx.conn, identity)
            if statically_missing and not exists:
                raise _missing(
                    rtype.type, statically_missing, entry.required_properties, "relationship"
                )
            payload = {
                "identity": identity,
                "type": rtype.type,
                "remapped_from": rtype.remapped_from,
                "from": start.ref,
                "to": end.ref,
                "properties": changes,
                "created": not exists,
                "stubs_created": absent,
            }
            streams = (stream, *(node_stream(ref["identity"]) for ref in absent))
            tx.emit(
                _draft(
                    RELATIONSHIP_WRITTEN, streams, payload, provenance, request_json, expected, item
                )
            )

        return emit

    def _plan_delete_node(
        self, request: DeleteNodeRequest, snapshot: LoadedSchema, raw: Mapping[str, Any]
    ) -> Emitter:
        checks.check_names(request.merge_keys, "merge_keys")
        provenance = self._provenance(request, snapshot)
        target = self._endpoint(request.label, request.merge_keys, snapshot, "node")
        ref = {**target.ref, "remapped_from": None}
        stream = node_stream(ref["identity"])
        expected = {stream: request.if_version} if request.if_version is not None else {}
        request_json = dict(raw)

        def emit(tx: Transaction, item: int | None) -> None:
            if not self.state.node_exists(tx.conn, ref["identity"]):
                raise GateRejection(
                    ErrorCode.NODE_NOT_FOUND,
                    f"node {ref['identity']} does not exist",
                    {"label": ref["label"], "keys": ref["keys"]},
                )
            attached = self.state.relationships_of(tx.conn, ref["identity"])
            if attached and not request.detach:
                raise GateRejection(
                    ErrorCode.NODE_HAS_RELATIONSHIPS,
                    f"node {ref['identity']} has {len(attached)} relationship(s); "
                    "delete them first or pass detach=true",
                    {
                        "count": len(attached),
                        "relationships": [r["identity"] for r in attached[:20]],
                    },
                )
            for rel in attached:
                payload = {
                    "identity": rel["identity"],
                    "type": rel["type"],
                    "from": rel["from"],
                    "to": rel["to"],
                    "cascade_of": ref["identity"],
                }
                tx.emit(
                    _draft(
                        RELATIONSHIP_DELETED,
                        (relationship_stream(rel["identity"]),),
                        payload,
                        provenance,
                        request_json,
                        {},
                        item,
                    )
                )
            payload = {"node": ref, "detached": [r["identity"] for r in attached]}
            tx.emit(
                _draft(NODE_DELETED, (stream,), payload, provenance, request_json, expected, item)
            )

        return emit

    def _plan_delete_relationship(
        self, request: DeleteRelationshipRequest, snapshot: LoadedSchema, raw: Mapping[str, Any]
    ) -> Emitter:
        checks.check_names(request.from_keys, "from_keys")
        checks.check_names(request.to_keys, "to_keys")
        provenance = self._provenance(request, snapshot)
        rtype, start, end, identity = self._relationship_target(request, snapshot)
        stream = relationship_stream(identity)
        expected = {stream: request.if_version} if request.if_version is not None else {}
        request_json = dict(raw)

        def emit(tx: Transaction, item: int | None) -> None:
            if not self.state.relationship_exists(tx.conn, identity):
                raise GateRejection(
                    ErrorCode.RELATIONSHIP_NOT_FOUND,
                    f"relationship {identity} does not exist",
                    {"identity": identity},
                )
            payload = {
                "identity": identity,
                "type": rtype.type,
                "from": start.ref["identity"],
                "to": end.ref["identity"],
                "cascade_of": None,
            }
            tx.emit(
                _draft(
                    RELATIONSHIP_DELETED,
                    (stream,),
                    payload,
                    provenance,
                    request_json,
                    expected,
                    item,
                )
            )

        return emit


# -- helpers ---------------------------------------------------------------------------


def _policy(value: str | None, where: str) -> str | None:
    if value is None or value == "":
        return None
    if value not in POLICIES:
        raise ValueError(f"{where} must be one of {POLICIES}, not {value!r}")
    return value


def _as_document(document: SchemaDocument | Mapping[str, Any] | str | Path) -> SchemaDocument:
    if isinstance(document, SchemaDocument):
        return document
    if isinstance(document, str | Path):
        return load_document(document)
    return parse_document(dict(document))


def _idempotency_key(key: Any) -> str | None:
    if key is None:
        return None
    if not isinstance(key, str) or not 1 <= len(key) <= 200:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            "idempotency_key must be a string of 1 to 200 characters",
            {"field": "idempotency_key"},
        )
    return key


def _json_safe(arguments: Any) -> None:
    try:
        canonical_json(arguments)
    except TypeError as exc:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"arguments are not representable as JSON: {exc}",
            {"field": "arguments"},
        ) from exc


def _draft(
    type_: str,
    streams: Sequence[str],
    payload: dict[str, Any],
    provenance: dict[str, Any],
    request: dict[str, Any],
    expected: dict[str, int],
    item: int | None,
) -> DraftEvent:
    if item is not None:
        payload = {**payload, "batch_item": item}
    return DraftEvent(
        type=type_,
        streams=tuple(streams),
        payload=payload,
        provenance=provenance,
        request=request,
        expected_versions=expected,
    )


def _missing(
    owner: str, missing: list[str], required: list[str], where: str = "node"
) -> GateRejection:
    where = {
        "node": "merge_keys, properties and the stored node",
        "request": "merge_keys and properties",
        "relationship": "the properties of this new relationship",
    }[where]
    return GateRejection(
        ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY,
        f"{owner} requires {missing} (absent from {where}, or set to null)",
        {"missing": missing, "required": required, "label": owner},
    )


def _unavailable(exc: SchemaSourceUnavailable, kept: bool) -> GateRejection:
    return GateRejection(
        ErrorCode.SCHEMA_SOURCE_UNAVAILABLE,
        str(exc),
        {"previous_snapshot_kept": kept},
    )


class _DryRun(Exception):
    def __init__(self, events: list[Event]) -> None:
        self.events = events


class _item:
    """Re-label a rejection raised while handling batch item ``index``."""

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
                {"item": self.index, "op": self.op, **_conflict_details(exc)},
            ) from exc


def _conflict_details(exc: VersionConflict) -> dict[str, Any]:
    return {"stream": exc.stream, "expected_version": exc.expected, "current_version": exc.current}


def _rejected(exc: Exception) -> Rejected:
    if isinstance(exc, GateRejection):
        return Rejected(error_code=exc.code, message=exc.message, details=exc.details)
    if isinstance(exc, VersionConflict):
        return Rejected(
            error_code=ErrorCode.VERSION_CONFLICT, message=str(exc), details=_conflict_details(exc)
        )
    if isinstance(exc, IdempotencyKeyReused):
        return Rejected(error_code=ErrorCode.IDEMPOTENCY_KEY_REUSED, message=str(exc))
    raise exc


# -- results from events -----------------------------------------------------------------


def _ref(payload_ref: Mapping[str, Any]) -> NodeRef:
    return NodeRef(label=payload_ref["label"], merge_keys=payload_ref["keys"])


def _result_fields(events: Sequence[Event]) -> dict[str, Any]:
    """The result of one operation, from the events it appended (the last one names it)."""
    last = events[-1]
    payload, provenance = last.payload, last.provenance or {}
    common = {
        "write_gate_version": provenance["write_gate_version"],
        "seq": last.seq,
        "event_id": last.event_id,
    }
    if last.type == NODE_WRITTEN:
        node = payload["node"]
        return {
            **common,
            "label": node["label"],
            "merge_keys": node["keys"],
            "confidence": provenance["confidence"],
            "remapped_from": node["remapped_from"],
            "created": payload["created"],
            "version": last.streams[node_stream(node["identity"])],
            "schema_version": provenance["schema_version"],
        }
    if last.type == RELATIONSHIP_WRITTEN:
        return {
            **common,
            "type": payload["type"],
            "from_node": _ref(payload["from"]),
            "to_node": _ref(payload["to"]),
            "confidence": provenance["confidence"],
            "remapped_from": payload["remapped_from"],
            "stubs_created": [_ref(s) for s in payload["stubs_created"]],
            "created": payload["created"],
            "version": last.streams[relationship_stream(payload["identity"])],
            "schema_version": provenance["schema_version"],
        }
    if last.type == NODE_DELETED:
        node = payload["node"]
        return {
            **common,
            "label": node["label"],
            "merge_keys": node["keys"],
            "relationships_deleted": len(payload["detached"]),
            "version": last.streams[node_stream(node["identity"])],
        }
    if last.type == RELATIONSHIP_DELETED:
        return {
            **common,
            "type": payload["type"],
            "from_node": _identity_ref(payload["from"]),
            "to_node": _identity_ref(payload["to"]),
            "version": last.streams[relationship_stream(payload["identity"])],
        }
    raise ValueError(f"no result shape for event type {last.type!r}")


def _identity_ref(identity: str) -> NodeRef:
    label, keys = parse_node_identity(identity)
    return NodeRef(label=label, merge_keys=keys)


_RESULT_TYPES: dict[str, type[BaseModel]] = {
    NODE_WRITTEN: WriteNodeResult,
    RELATIONSHIP_WRITTEN: WriteRelationshipResult,
    NODE_DELETED: DeleteNodeResult,
    RELATIONSHIP_DELETED: DeleteRelationshipResult,
}


def _batch_result(events: Sequence[Event]) -> BatchResult:
    by_item: dict[int, list[Event]] = {}
    for event in events:
        by_item.setdefault(event.payload["batch_item"], []).append(event)
    results: list[ItemResult] = []
    for index in sorted(by_item):
        group = by_item[index]
        model = _RESULT_TYPES[group[-1].type]
        results.append(model.model_validate(_result_fields(group)))  # type: ignore[arg-type]
    return BatchResult(results=results, first_seq=events[0].seq, last_seq=events[-1].seq)
