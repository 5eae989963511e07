"""Planning a write: the stateless checks now, an emitter for the write transaction later.

Each planner takes one parsed request and the schema snapshot, runs every check that needs
no state (``INVALID_…``, ``SCHEMA_…``, the formula), computes the provenance, and returns an
``Emitter``: the function the write transaction calls, under the log's write lock, to run
the checks that read current state (endpoints, existence, the stored node's required
properties and identity, versions) and emit the typed events; a rejection appends nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from writegate.eventlog import Transaction
from writegate.gate import checks, citations, conflicts, review
from writegate.gate import corroboration as heard
from writegate.gate.ahead import want
from writegate.gate.authority import declared, of_lineage, restated
from writegate.gate.errors import ErrorCode, GateRejection, relationship_not_found
from writegate.gate.formula import FormulaProvider, compute_confidence
from writegate.gate.models import (
    Declared,
    DeleteNodeRequest,
    DeleteRelationshipRequest,
    WriteNodeRequest,
    WriteRelationshipRequest,
)
from writegate.gate.resolution import disputes, endpoints, matching
from writegate.gate.resolution.alternatives import alternatives
from writegate.gate.schema import LoadedSchema
from writegate.gate.schema.registry import RelationshipEntry, SchemaEntry
from writegate.gate.scopes import end_scopes, node_scope
from writegate.gate.version import __version__
from writegate.language import (
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipDeleted,
    RelationshipWritten,
    WriteProvenance,
    draft,
    relationship_identity,
    relationship_stream,
)
from writegate.projections.state import StateProjection
from writegate.projections.state.scoping import scope_of

Emitter = Callable[[Transaction, int | None], None]  # its int: the batch item (None: none)


@dataclass(frozen=True)
class _Endpoint:
    ref: NodeRef  # under the canonical label whose schema entry applies
    entry: SchemaEntry


class Planner:
    """The planners of the four graph operations, over one state model and formula."""

    def __init__(
        self,
        state: StateProjection,
        formula: FormulaProvider,
        formula_name: str,
        label_policy: Callable[[LoadedSchema], str],
        *,
        reviewed: bool = False,
    ) -> None:
        self.state = state
        self.formula = formula
        self.formula_name = formula_name
        self.label_policy = label_policy
        self.reviewed = reviewed  # planning a write a reviewer approved: nothing is held

    def approving(self) -> Planner:
        """This planner for writes a reviewer approved (no floor; ``review`` supersedes)."""
        return Planner(
            self.state, self.formula, self.formula_name, self.label_policy, reviewed=True
        )

    def provenance(self, request: Declared, snapshot: LoadedSchema) -> WriteProvenance:
        return WriteProvenance(
            source=request.source,
            extraction_method=request.extraction_method,
            reliability=request.reliability,
            confidence=compute_confidence(
                self.formula, request.reliability, request.extraction_method
            ),
            formula=self.formula_name,
            write_gate_version=__version__,
            schema_version=snapshot.version,
            observations=citations.cited(request),
            authority=declared(snapshot.authority, request.extraction_method, request.source),
        )

    def _endpoint(
        self, label: str, keys: Mapping[str, Any], snapshot: LoadedSchema, end: str
    ) -> _Endpoint:
        resolved = checks.resolve_label(
            label, snapshot.registry, self.label_policy(snapshot), f"{end}_label"
        )
        if not keys:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                f"{end}_keys must identify the node",
                {"field": f"{end}_keys"},
            )
        checks.check_keys(keys, resolved.entry, f"{end}_keys")
        ref = NodeRef.of(resolved.label, keys, resolved.remapped_from)
        want(ref.identity)
        return _Endpoint(ref, resolved.entry)

    def _relationship_target(
        self, request: WriteRelationshipRequest | DeleteRelationshipRequest, snapshot: LoadedSchema
    ) -> tuple[checks.ResolvedType, _Endpoint, _Endpoint, str]:
        rtype = checks.resolve_type(request.type, snapshot.registry)
        start = self._endpoint(request.from_label, request.from_keys, snapshot, "from")
        end = self._endpoint(request.to_label, request.to_keys, snapshot, "to")
        checks.check_endpoint(rtype, "from", start.ref)
        checks.check_endpoint(rtype, "to", end.ref)
        identity = relationship_identity(rtype.type, start.ref.identity, end.ref.identity)
        return rtype, start, end, identity

    # -- the four operations ---------------------------------------------------------------

    def write_node(
        self, request: WriteNodeRequest, snapshot: LoadedSchema, raw: Mapping[str, Any]
    ) -> Emitter:
        checks.check_names(request.merge_keys, "merge_keys")
        checks.check_names(request.properties, "properties")
        stated, ranks = self.provenance(request, snapshot), snapshot.authority
        resolved = checks.resolve_label(
            request.label, snapshot.registry, self.label_policy(snapshot)
        )
        entry = resolved.entry
        keys = request.merge_keys
        if keys:  # keys that name other properties than the declared ones: say so first
            checks.check_keys(keys, entry, "merge_keys")
        unknown = checks.check_properties(
            request.properties, entry.properties, entry.additional_properties, resolved.label
        )
        changes = checks.reconcile_keys_and_properties(keys, request.properties, "merge_keys")
        required = list(dict.fromkeys([*entry.merge_keys, *entry.required_properties]))
        statically_missing = checks.missing_required(required, keys, changes, {})
        if not keys and statically_missing:  # seed 000 row 6: nothing names the node
            raise checks.missing(resolved.label, statically_missing, required, "request")
        if not keys:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                "merge_keys must not be empty: they are the node's identity",
                {"field": "merge_keys"},
            )
        ref = NodeRef.of(resolved.label, keys, resolved.remapped_from)
        want(ref.identity)
        valid = request.stated()
        expected = {ref.stream: request.if_version} if request.if_version is not None else {}
        request_json = dict(raw)
        create_only = request.create_only
        fresh, same = request.resolution == "new", request.resolution == "same"
        matching.read_ahead(entry, ref, {**keys, **changes}, new=fresh)  # its candidates

        def emit(tx: Transaction, item: int | None) -> None:
            provenance = of_lineage(self.state, tx, stated, ranks)  # the lowest cited
            here = matching.met(self.state, tx.conn, ref)  # a merged duplicate: its survivor
            landing = matching.land(
                self.state, tx.conn, entry, here.ref, here.row, changes, new=fresh
            )
            target, existing = landing.ref, landing.existing
            if create_only and existing is not None and not existing.stub:
                raise GateRejection(
                    ErrorCode.NODE_ALREADY_EXISTS,
                    f"{target.identity} already exists (version {existing.version}); "
                    "change it with an update, or write_node without create_only",
                    {"label": target.label, "keys": target.keys, "version": existing.version},
                )
            if statically_missing:
                stored = existing.properties if existing else {}
                if still := checks.missing_required(statically_missing, keys, changes, stored):
                    raise checks.missing(resolved.label, still, required)
            held = existing if existing is not None and not existing.stub else None
            if held is not None and not same:  # another thing of the same name: refused
                maybe = partial(alternatives, self.state, tx.conn, entry, held, changes)
                disputes.check_landing(entry, held, changes, not self.reviewed, maybe)
            now = scope_of(tx.conn, target.identity)
            scope, moved = node_scope(snapshot, target.label, request.scope, now)
            said = heard.Saying(changes, valid, provenance, expected, request_json, item)
            aliased = landing.resolved_from or here.aliased
            if held and not moved and heard.node(self, tx, held, target, said, scope, aliased):
                return
            superseded = conflicts.of_properties(
                self.state, tx.conn, held, changes, entry, provenance, hold=not self.reviewed
            )
            written = NodeWritten(
                node=target,
                properties=restated(self.state, tx.conn, held, changes, provenance, keys),
                created=existing is None,
                stub_resolved=bool(existing and existing.stub),
                superseded=superseded or None,
                **valid,
                resolution_keys=landing.keys,
                resolved_from=aliased,
                unknown_properties=unknown or None,
                scope=scope,
                moved_from=moved,
                unsearchable=entry.unsearchable or None,
                batch_item=item,
            )
            tx.emit(
                draft(
                    written,
                    [target.stream],
                    provenance=provenance,
                    request=request_json,
                    expected=expected,
                )
            )

        return self._reviewable(emit, "write_node", raw, stated, ref.identity, entry)

    def write_relationship(
        self, request: WriteRelationshipRequest, snapshot: LoadedSchema, raw: Mapping[str, Any]
    ) -> Emitter:
        checks.check_names(request.from_keys, "from_keys")
        checks.check_names(request.to_keys, "to_keys")
        checks.check_names(request.properties, "properties")
        stated, ranks = self.provenance(request, snapshot), snapshot.authority
        rtype, start, end, identity = self._relationship_target(request, snapshot)
        entry = rtype.entry
        unknown = checks.check_properties(
            request.properties, entry.properties, entry.additional_properties, rtype.type
        )
        changes = dict(request.properties)
        statically_missing = checks.missing_required(entry.required_properties, {}, changes, {})
        stream = relationship_stream(identity)
        valid = request.stated()
        expected = {stream: request.if_version} if request.if_version is not None else {}
        merge = request.endpoint_policy == "merge_endpoints"
        request_json = dict(raw)

        def emit(tx: Transaction, item: int | None) -> None:
            provenance = of_lineage(self.state, tx, stated, ranks)
            ends = endpoints.settle(  # a merged duplicate's survivor; stubs resolved as any node
                self.state, tx.conn, ((start.ref, start.entry), (end.ref, end.entry)), create=merge
            )
            head, tail, absent = ends.head, ends.tail, ends.stubs
            rid = relationship_identity(rtype.type, head.identity, tail.identity)
            held = self.state.relationship(tx.conn, rid)
            exists = held is not None
            if statically_missing and not exists:
                raise checks.missing(
                    rtype.type, statically_missing, entry.required_properties, "relationship"
                )
            said = heard.Saying(changes, valid, provenance, expected, request_json, item)
            scopes = end_scopes(tx.conn, snapshot, (head, tail))
            resolved = ends.resolved_from or None
            if held and not absent and heard.relationship(self, tx, held, said, scopes, resolved):
                return
            superseded = conflicts.of_properties(
                self.state, tx.conn, held, changes, entry, provenance, hold=not self.reviewed
            )
            if entry.functional:
                claim = (rid, head.identity, rtype.type, entry, provenance, request_json)
                replacing = conflicts.Replacing(*claim, hold=not self.reviewed)
                superseded += conflicts.end_replaced(self.state, tx, item, replacing)
            written = RelationshipWritten(
                identity=rid,
                type=rtype.type,
                remapped_from=rtype.remapped_from,
                from_node=head,
                to_node=tail,
                properties=restated(self.state, tx.conn, held, changes, provenance, {}),
                created=not exists,
                stubs_created=absent,
                superseded=superseded or None,
                **valid,
                stub_keys=ends.stub_keys or None,
                resolved_from=resolved,
                unknown_properties=unknown or None,
                scopes=scopes,
                batch_item=item,
            )
            streams = [written.stream, *(ref.stream for ref in absent)]
            tx.emit(
                draft(
                    written, streams, provenance=provenance, request=request_json, expected=expected
                )
            )

        return self._reviewable(emit, "write_relationship", raw, stated, identity, entry)

    def _reviewable(
        self,
        emit: Emitter,
        operation: str,
        raw: Mapping[str, Any],
        provenance: WriteProvenance,
        target: str,
        entry: SchemaEntry | RelationshipEntry,
    ) -> Emitter:
        if not self.reviewed:  # a held write, too, cites only what the log holds
            emit = review.proposing(
                emit, operation, dict(raw), provenance, target, entry, self.state
            )
        return citations.checked(self.state, provenance.observations, emit, provenance.source)

    def delete_node(
        self, request: DeleteNodeRequest, snapshot: LoadedSchema, raw: Mapping[str, Any]
    ) -> Emitter:
        checks.check_names(request.merge_keys, "merge_keys")
        provenance = self.provenance(request, snapshot)
        target = self._endpoint(request.label, request.merge_keys, snapshot, "node")
        ref = target.ref.model_copy(update={"remapped_from": None})
        expected = {ref.stream: request.if_version} if request.if_version is not None else {}
        request_json = dict(raw)

        def emit(tx: Transaction, item: int | None) -> None:
            if not self.state.node_exists(tx.conn, ref.identity):
                raise matching.not_found(self.state, tx.conn, ref)
            attached = self.state.relationships_of(tx.conn, ref.identity)
            if attached and not request.detach:
                raise GateRejection(
                    ErrorCode.NODE_HAS_RELATIONSHIPS,
                    f"node {ref.identity} has {len(attached)} relationship(s); "
                    "delete them first, or detach them with the node (detach: true)",
                    {"count": len(attached), "relationships": [r.identity for r in attached[:20]]},
                )
            for rel in attached:
                cascade = RelationshipDeleted(
                    identity=rel.identity,
                    type=rel.type,
                    from_identity=rel.from_identity,
                    to_identity=rel.to_identity,
                    cascade_of=ref.identity,
                    batch_item=item,
                )
                tx.emit(
                    draft(cascade, [cascade.stream], provenance=provenance, request=request_json)
                )
            detached = [r.identity for r in attached]
            deleted = NodeDeleted(node=ref, detached=detached, batch_item=item)
            tx.emit(
                draft(
                    deleted,
                    [ref.stream],
                    provenance=provenance,
                    request=request_json,
                    expected=expected,
                )
            )

        return emit

    def delete_relationship(
        self, request: DeleteRelationshipRequest, snapshot: LoadedSchema, raw: Mapping[str, Any]
    ) -> Emitter:
        checks.check_names(request.from_keys, "from_keys")
        checks.check_names(request.to_keys, "to_keys")
        provenance = self.provenance(request, snapshot)
        rtype, start, end, identity = self._relationship_target(request, snapshot)
        stream = relationship_stream(identity)
        expected = {stream: request.if_version} if request.if_version is not None else {}
        request_json = dict(raw)

        def emit(tx: Transaction, item: int | None) -> None:
            if not self.state.relationship_exists(tx.conn, identity):
                raise relationship_not_found(identity)
            deleted = RelationshipDeleted(
                identity=identity,
                type=rtype.type,
                from_identity=start.ref.identity,
                to_identity=end.ref.identity,
                cascade_of=None,
                batch_item=item,
            )
            tx.emit(
                draft(
                    deleted,
                    [stream],
                    provenance=provenance,
                    request=request_json,
                    expected=expected,
                )
            )

        return emit
