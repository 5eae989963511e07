"""Writes inside a caller's grant: a caller granted some scopes may not create, change,
delete, merge away or re-weight anything outside them (``POLICY_DENIED``, naming the
scope and nothing else).

Two checks, one before and one inside the write:

* ``outside_grant``, before a write tool runs: the nodes its arguments name (and those
  graph_improve names) are in the scope the write asks for or their label's, and one that
  is there in its own; one outside the grant is refused before the gate plans anything, so
  no answer about a node there — conflicting, has relationships — can reach the caller
  (that a node of those keys is there, outside, is all the refusal says: an identity is
  the same in every scope); an observation it cites that is kept outside is not found,
  as one never kept;
* ``WriteScopes``, the write guard's part, inside the append transaction: the scopes of
  exactly the events the write would append. Node and relationship writes record theirs
  (``gate.scopes.Scopes.refused``); deletions, feedback and held writes record none, so
  each node they touch is looked up in the read model of the transaction, or (a node this
  very write deleted) taken from its label's schema entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from typing import Any

from pydantic import BaseModel

from writegate.eventlog import Event
from writegate.eventlog.sql import Sql
from writegate.gate.api import Gate
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import Rejected
from writegate.gate.personal import identity_in
from writegate.gate.schema import LoadedSchema, SchemaSourceUnavailable
from writegate.gate.scopes import Scopes, label_scope
from writegate.gate.server.tools import ToolCall, ToolSpec
from writegate.gate.server.unseen import ENDS, unseen, unseen_items
from writegate.language import (
    FeedbackGiven,
    NodeDeleted,
    RelationshipDeleted,
    WriteProposed,
    parse_node_identity,
    payload_of,
    scope_or_default,
)
from writegate.language.observations import CITABLE_ID
from writegate.projections.state.scoping import scope_of

_LABEL_FIELDS = ("label", "from_label", "to_label")


def refusal(agent: str, tool: str, scopes: Iterable[str]) -> GateRejection:
    """The one answer to a write outside the grant: which scopes, nothing about what is there."""
    named = sorted(set(scopes))
    return GateRejection(
        ErrorCode.POLICY_DENIED,
        f"agent {agent!r} may not write in scope {', '.join(named)} with {tool}",
        {"agent": agent, "tool": tool, "scopes": named},
    )


def _schema(gate: Gate) -> LoadedSchema | None:
    try:
        return gate.current_schema()
    except SchemaSourceUnavailable:
        return None


def _scope_of_label(snapshot: LoadedSchema | None, label: str) -> str:
    """The scope a label's nodes are in (a synonym: its canonical label's)."""
    if snapshot is None:
        return scope_or_default(None)
    registry = snapshot.registry
    if registry.get_entry(label) is None:
        label = registry.remap_target(label) or label
    return scope_or_default(label_scope(snapshot, label))


class WriteScopes:
    """The scopes outside ``granted`` that a write's events touch (the write guard asks)."""

    def __init__(self, gate: Gate, granted: frozenset[str]) -> None:
        self.gate = gate
        self.granted = granted

    def __call__(self, events: Sequence[Event]) -> list[str]:
        outside = dict.fromkeys(Scopes(granted=self.granted).refused(events))
        unrecorded = [e for e in events if isinstance(payload_of(e), _UNRECORDED)]
        if unrecorded:
            snapshot = _schema(self.gate)
            # the guard runs inside the append: this joins its transaction, so it reads the
            # read model as the write has left it so far
            with self.gate.log.snapshot() as conn:
                for scope in self._touched(conn, snapshot, unrecorded):
                    if scope not in self.granted:
                        outside.setdefault(scope)
        return list(outside)

    def _node(self, conn: Sql, snapshot: LoadedSchema | None, identity: str) -> str:
        return scope_of(conn, identity) or _scope_of_label(
            snapshot, parse_node_identity(identity)[0]
        )

    def _touched(
        self, conn: Sql, snapshot: LoadedSchema | None, events: Iterable[Event]
    ) -> Iterable[str]:
        for event in events:
            match payload_of(event):
                case NodeDeleted(node=node):  # gone from the read model: its label says
                    yield _scope_of_label(snapshot, node.label)
                case RelationshipDeleted() as deleted:
                    yield self._node(conn, snapshot, deleted.from_identity)
                    yield self._node(conn, snapshot, deleted.to_identity)
                case FeedbackGiven() as given:
                    for identity in given.nodes:
                        yield self._node(conn, snapshot, identity)
                    for used in given.relationships:
                        edge = self.gate.state.relationship(conn, used.identity)
                        if edge is not None:
                            yield self._node(conn, snapshot, edge.from_identity)
                            yield self._node(conn, snapshot, edge.to_identity)
                case WriteProposed(arguments=arguments):  # a held write: where it would land
                    yield from (_scope_of_label(snapshot, label) for label in _labels(arguments))
                case _:
                    pass


_UNRECORDED = (NodeDeleted, RelationshipDeleted, FeedbackGiven, WriteProposed)


def _labels(arguments: Mapping[str, Any]) -> Iterable[str]:
    for field in _LABEL_FIELDS:
        if isinstance(label := arguments.get(field), str):
            yield label.removeprefix(":")


Named = tuple[str, Mapping[str, Any] | None, str | None]  # (label, keys, the scope asked)


def _nodes(arguments: Mapping[str, Any]) -> Iterable[Named]:
    """The nodes one write's arguments name: label, keys, and the scope it asks its node in."""
    asked = arguments.get("scope")
    for label_field, keys_field in ENDS:
        if isinstance(label := arguments.get(label_field), str):
            keys = arguments.get(keys_field)
            yield (
                label.removeprefix(":"),
                keys if isinstance(keys, Mapping) else None,
                asked if label_field == "label" and isinstance(asked, str) else None,
            )


def _labelled(spec: ToolSpec, raw: Mapping[str, Any], snapshot: LoadedSchema | None) -> Named:
    """The node a per-label tool names: its label, its entity's merge keys, the scope asked."""
    [label] = spec.labels
    entity = raw.get(label.lower())
    entry = snapshot.registry.get_entry(label) if snapshot is not None else None
    keys = None
    if isinstance(entity, Mapping) and entry is not None:
        keys = {k: entity[k] for k in entry.merge_keys if k in entity} or None
    return label, keys, raw.get("scope") if isinstance(raw.get("scope"), str) else None


def _named(
    spec: ToolSpec, raw: Mapping[str, Any], snapshot: LoadedSchema | None
) -> Iterable[Named]:
    """The nodes a write tool's arguments name: its own label's (a per-label tool), the
    generic tools' fields, each batch item's, and the nodes feedback names by identity."""
    if spec.labels:
        yield _labelled(spec, raw, snapshot)
    yield from _nodes(raw)
    items = raw.get("items")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            yield from _nodes(item)
    used = raw.get("usedNodeIds")
    identities = list(used) if isinstance(used, list) else []
    edges = raw.get("usedEdgeKeys")
    for edge in edges if isinstance(edges, list) else []:
        if isinstance(edge, dict):
            identities += [edge.get("sourceId"), edge.get("targetId")]
    for identity in identities:
        if isinstance(identity, str):
            try:
                label, keys = parse_node_identity(identity)
            except ValueError:
                continue  # not an identity: the tool refuses it itself
            yield label, keys, None


def _outside(call: ToolCall, spec: ToolSpec, writes: frozenset[str]) -> GateRejection | None:
    """The refusal of a write naming what lies outside ``writes``, or None. A scope it asks
    for (else its label's) outside is ``POLICY_DENIED``, naming those scopes whether or not
    its node is there. Else a node that is there, outside: a deletion or an update of it is
    answered as one of a node that is not there (``unseen``); any other write, which would
    make it or change it, is ``POLICY_DENIED`` — that its identity is taken is what the
    refusal tells, as an identity is the same in every scope."""
    snapshot = _schema(call.gate)
    asked: set[str] = set()
    there: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for label, keys, scope in _named(spec, call.raw, snapshot):
        asked.add(scope or _scope_of_label(snapshot, label))
        if keys is not None:
            with suppress(TypeError, ValueError):  # keys that are no identity: the tool's
                there[identity_in(call.gate.log, snapshot, label, keys)] = (label, keys)
    if asked - writes:
        return refusal(call.actor.agent, spec.name, asked - writes)
    scopes = _scopes_there(call.gate, list(there))
    hidden = [i for i, s in zip(there, scopes, strict=True) if s and s not in writes]
    if not hidden:
        return None
    if (absent := unseen(call, spec, snapshot)) is not None:
        return absent
    if spec.name == "write_batch" and (aimed := unseen_items(call, snapshot, hidden)) is not None:
        call.unseen.update(aimed)  # refused as the batch reaches them
        return None
    return refusal(call.actor.agent, spec.name, {s for s in scopes if s and s not in writes})


def _scopes_there(gate: Gate, identities: list[str]) -> list[str | None]:
    """The scopes of the nodes ``identities`` name as the read model holds them (None:
    absent). One node — a single write's — is one statement outside any transaction, its own
    snapshot: on PostgreSQL one round trip, not a read transaction's three (its ``BEGIN``
    and ``ROLLBACK`` were a served write's dearest statements after its own). Several are
    read in one snapshot."""
    if len(identities) == 1:
        return [scope_of(gate.log.connection(), identities[0])]
    if not identities:
        return []
    with gate.log.snapshot() as conn:
        return [scope_of(conn, identity) for identity in identities]


def _cited(raw: Mapping[str, Any]) -> list[str]:
    """The observations a write cites: its own and each batch item's."""
    items = raw.get("items")
    cited: list[str] = []
    for source in (
        [raw, *(i for i in items if isinstance(i, dict))] if isinstance(items, list) else [raw]
    ):
        named = source.get("observations")
        if isinstance(named, list):  # a malformed id is the tool's to refuse
            cited += [o for o in named if isinstance(o, str) and CITABLE_ID.fullmatch(o)]
    return cited


def _unseen(call: ToolCall, writes: frozenset[str]) -> GateRejection | None:
    """A cited observation kept outside the grant: not found, as one never kept."""
    cited = _cited(call.raw)
    if not cited:
        return None
    with call.gate.log.snapshot() as conn:
        seen = {row.id for row in call.gate.state.observations(conn, cited, writes)}
    if not (missing := [o for o in dict.fromkeys(cited) if o not in seen]):
        return None
    return GateRejection(
        ErrorCode.OBSERVATION_NOT_FOUND,
        f"no observation {', '.join(missing)}: record it first (record_observation)",
        {"missing": missing},
    )


def outside_grant(spec: ToolSpec, call: ToolCall) -> Rejected | None:
    """A write naming a node whose scope is outside the call's grant, or citing an
    observation kept outside it, refused (and recorded as refused) before it runs; None
    when everything it names is inside."""
    if call.writes is None:
        return None
    exc = _unseen(call, call.writes) or _outside(call, spec, call.writes)
    if exc is None:
        return None
    return call.gate.writer.refused(call.actor, spec.name, exc, call.raw)


def scrubbed(result: BaseModel, scopes: frozenset[str] | None) -> BaseModel:
    """A refusal as a caller granted ``scopes`` may read it: a node's relationships are
    counted, not listed (they may lead where it cannot see)."""
    if scopes is None or not isinstance(result, Rejected):
        return result
    if result.error_code != ErrorCode.NODE_HAS_RELATIONSHIPS:
        return result
    details = {k: v for k, v in result.details.items() if k != "relationships"}
    return result.model_copy(update={"details": details})
