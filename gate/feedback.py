"""graph_improve: an agent's feedback on an answer, which re-weights the facts it used.

Seed 004's ``graph_improve``: ``{sessionId, outcome: accepted | rework | rejected,
usedNodeIds, usedEdgeKeys}`` is appended as one ``feedback.given`` event with the
caller's provenance, and the read model moves each used node's and relationship's weight
by an exponential moving average toward 1.0 / 0.5 / 0.0 (``projections.state.feedback``).

Once per answer: the event goes to the stream of (agent, sessionId, answerId) at
expected version 0, checked in the write transaction, so the same feedback sent twice —
or twice at once — appends once; the second answer is ``unchanged``. Other feedback on
an answer already rated is ``FEEDBACK_ALREADY_GIVEN`` (an answer is rated once; a new
answer is a new ``answerId``).

Used facts must exist: a node or edge the graph does not hold is refused
(``NODE_NOT_FOUND`` / ``RELATIONSHIP_NOT_FOUND``, every missing one named), so a typo is
not a silent no-op; a merged duplicate's identity lands on its survivor, as writes do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from writegate.eventlog import Actor, Event, EventCore, Log, Transaction, VersionConflict
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.limits import Limits, check_request
from writegate.gate.models import Provenanced, Rejected, Reliability, parse_request
from writegate.gate.results import REFUSALS
from writegate.gate.schema import LoadedSchema
from writegate.gate.writing import WriteGuard, Writer
from writegate.language import (
    FeedbackGiven,
    Outcome,
    UsedRelationship,
    draft,
    feedback_stream,
    payload_of,
    relationship_identity,
)
from writegate.projections.state import DEFAULT_FLOOR, StateReader

OPERATION = "graph_improve"
DEFAULT_ALPHA = 0.3  # how far one answer moves a weight toward its target
DEFAULT_METHOD = "api"  # the agent's own report of how its answer fared
MAX_USED = 1000  # used nodes, and used edges, per feedback


class FeedbackSettings(BaseModel):
    """``[recall] feedback_alpha`` and ``feedback_floor``: the rate a feedback event
    records (so changing it moves only later feedback), and the ranking floor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    alpha: float = Field(default=DEFAULT_ALPHA, gt=0, le=1)
    floor: float = Field(default=DEFAULT_FLOOR, ge=0, le=1)


_ARGS = ConfigDict(extra="forbid", frozen=True, validate_by_name=False, validate_by_alias=True)
_ID = 'A node as reads name it, e.g. Person{"name":"Ada"}.'


class EdgeKey(BaseModel):
    """A used relationship, named by its ends and its type (seed 004's shape)."""

    model_config = _ARGS

    source_id: StrictStr = Field(
        alias="sourceId", min_length=1, max_length=2000, description=f"Its start. {_ID}"
    )
    target_id: StrictStr = Field(
        alias="targetId", min_length=1, max_length=2000, description="Its end."
    )
    relationship_name: StrictStr = Field(
        alias="relationshipName", min_length=1, max_length=200, description="Its type."
    )


class GraphImproveRequest(BaseModel):
    model_config = _ARGS

    session_id: StrictStr = Field(
        alias="sessionId",
        min_length=1,
        max_length=200,
        description="The answer's session (counted once per sessionId, answerId).",
    )
    answer_id: StrictStr | None = Field(
        default=None,
        alias="answerId",
        min_length=1,
        max_length=200,
        description="Which answer of the session.",
    )
    outcome: Outcome = Field(description="Moves used weights toward 1, 0.5 or 0.")
    used_node_ids: list[StrictStr] = Field(
        default_factory=list,
        alias="usedNodeIds",
        max_length=MAX_USED,
        description="The nodes the answer used, as reads name them.",
    )
    used_edge_keys: list[EdgeKey] = Field(
        default_factory=list,
        alias="usedEdgeKeys",
        max_length=MAX_USED,
        description="The relationships the answer used.",
    )
    source: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=2000,
        description="Its source (default: session:<sessionId>).",
    )
    extraction_method: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description=f"How it was obtained (default: {DEFAULT_METHOD}).",
    )
    reliability: Reliability = Field(
        default=0.5,
        description="How reliable it is.",
        json_schema_extra={"minimum": 0, "maximum": 1},
    )

    def claim(self) -> Provenanced:
        """The provenance the writer declares, with the defaults filled in."""
        return Provenanced(
            source=self.source or f"session:{self.session_id}",
            extraction_method=self.extraction_method or DEFAULT_METHOD,
            reliability=self.reliability,
        )

    def same(self, other: GraphImproveRequest) -> bool:
        """Whether ``other`` is this feedback again: the outcome and what was used."""
        return (self.outcome, *self._used()) == (other.outcome, *other._used())

    def _used(self) -> tuple[frozenset[str], frozenset[tuple[str, str, str]]]:
        edges = {(e.source_id, e.relationship_name, e.target_id) for e in self.used_edge_keys}
        return frozenset(self.used_node_ids), frozenset(edges)


class ImproveResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True)

    status: Literal["applied", "unchanged"]  # unchanged: this feedback was given already
    node_updates: int = Field(alias="nodeUpdates")  # weights moved (0 when unchanged)
    edge_updates: int = Field(alias="edgeUpdates")
    seq: int  # the feedback's event (unchanged: the earlier one)
    event_id: str


class _Given(Exception):
    """The answer's stream holds feedback already (found in the write transaction)."""


class Improvements:
    """graph_improve over one gate's ``Writer``, moving weights at ``alpha``."""

    def __init__(self, writer: Writer, alpha: float, limits: Limits) -> None:
        self.writer = writer
        self.log: Log = writer.log
        self.state: StateReader = writer.planner.state
        self.alpha = alpha
        self.limits = limits

    def improve(
        self, arguments: Mapping[str, Any], actor: Actor, guard: WriteGuard | None = None
    ) -> ImproveResult | Rejected:
        raw = dict(arguments)
        try:
            check_request(raw, self.limits)
            request = parse_request(GraphImproveRequest, raw)
            if not request.used_node_ids and not request.used_edge_keys:
                raise GateRejection(
                    ErrorCode.INVALID_ARGUMENT,
                    "name what the answer used: usedNodeIds, usedEdgeKeys or both",
                    {"field": "usedNodeIds"},
                )
            stream = feedback_stream(actor.agent, request.session_id, request.answer_id)
            earlier = self.log.latest(stream)
            if earlier is not None:  # no write lock for a resend
                return self._again(earlier, request)
            try:
                plan = self._plan(request, stream, raw, actor, guard)
                appended = self.writer.append_planned(plan, actor, None, raw).events
            except (_Given, VersionConflict) as exc:
                if isinstance(exc, VersionConflict) and exc.stream != stream:
                    raise
                again = self.log.latest(stream)
                if again is None:
                    raise
                return self._again(again, request)
            return _result(appended[-1], "applied")
        except REFUSALS as exc:
            return self.writer.refused(actor, OPERATION, exc, raw)

    def _plan(
        self,
        request: GraphImproveRequest,
        stream: str,
        raw: dict[str, Any],
        actor: Actor,
        guard: WriteGuard | None,
    ) -> Callable[[LoadedSchema], Callable[[Transaction], None]]:
        planner = self.writer.planner

        def plan(snapshot: LoadedSchema) -> Callable[[Transaction], None]:
            provenance = planner.provenance(request.claim(), snapshot)

            def decide(tx: Transaction) -> None:
                if tx.stream_version(stream):
                    raise _Given
                nodes, relationships = self._used(tx, request)
                payload = FeedbackGiven(
                    session_id=request.session_id,
                    answer_id=request.answer_id,
                    outcome=request.outcome,
                    alpha=self.alpha,
                    nodes=nodes,
                    relationships=relationships,
                )
                tx.emit(
                    draft(
                        payload, [stream], provenance=provenance, request=raw, expected={stream: 0}
                    )
                )
                if guard is not None:
                    guard(actor, tx.events)

            return decide

        return plan

    def _used(
        self, tx: Transaction, request: GraphImproveRequest
    ) -> tuple[list[str], list[UsedRelationship]]:
        """The used facts as the read model holds them now; refused if any is not there."""
        conn = tx.conn
        nodes: dict[str, None] = {}
        missing_nodes: list[str] = []
        for given in request.used_node_ids:
            found = self._node(tx, given)
            if found is None:
                missing_nodes.append(given)
            else:
                nodes[found] = None
        relationships: dict[str, UsedRelationship] = {}
        missing_edges: list[dict[str, str]] = []
        for key in request.used_edge_keys:
            start, end = self._node(tx, key.source_id), self._node(tx, key.target_id)
            edge = None
            if start is not None and end is not None:
                identity = relationship_identity(key.relationship_name, start, end)
                edge = self.state.relationship(conn, identity)
            if edge is None:
                missing_edges.append(key.model_dump(by_alias=True))
            else:
                relationships[edge.identity] = UsedRelationship(
                    identity=edge.identity, type=edge.type
                )
        if missing_nodes or missing_edges:
            details = {"missing_nodes": missing_nodes, "missing_relationships": missing_edges}
            if missing_nodes:
                raise GateRejection(
                    ErrorCode.NODE_NOT_FOUND,
                    f"the graph holds no node {', '.join(missing_nodes[:5])}"
                    + (f" (and {len(missing_nodes) - 5} more)" if len(missing_nodes) > 5 else ""),
                    details,
                )
            raise GateRejection(
                ErrorCode.RELATIONSHIP_NOT_FOUND,
                f"the graph holds no relationship {_edge_words(missing_edges[:5])}"
                + (f" (and {len(missing_edges) - 5} more)" if len(missing_edges) > 5 else ""),
                details,
            )
        return list(nodes), list(relationships.values())

    def _node(self, tx: Transaction, identity: str) -> str | None:
        """The node ``identity`` names now: itself, or the survivor it was merged into."""
        if self.state.node_exists(tx.conn, identity):
            return identity
        alias = self.state.alias_of(tx.conn, identity)
        if alias is not None and self.state.node_exists(tx.conn, alias[0]):
            return alias[0]
        return None

    def _again(self, earlier: EventCore, request: GraphImproveRequest) -> ImproveResult:
        """This answer's feedback was given already: the same is ``unchanged``, other
        feedback is refused."""
        first = self.log.read_range(earlier.seq, earlier.seq)[0]
        before = parse_request(GraphImproveRequest, first.request or {})
        if before.same(request):
            return _result(first, "unchanged")
        given = payload_of(first)
        outcome = given.outcome if isinstance(given, FeedbackGiven) else None
        raise GateRejection(
            ErrorCode.FEEDBACK_ALREADY_GIVEN,
            f"feedback on session {request.session_id!r}"
            + (f" answer {request.answer_id!r}" if request.answer_id else "")
            + f" was given at seq {first.seq} ({outcome}); an answer is rated once",
            {
                "sessionId": request.session_id,
                "answerId": request.answer_id,
                "seq": first.seq,
                "event_id": first.event_id,
                "outcome": outcome,
            },
        )


def _edge_words(edges: Sequence[dict[str, str]]) -> str:
    return ", ".join(
        f"({e['sourceId']})-[{e['relationshipName']}]->({e['targetId']})" for e in edges
    )


def _result(event: Event, status: Literal["applied", "unchanged"]) -> ImproveResult:
    given = payload_of(event)
    if not isinstance(given, FeedbackGiven):
        raise TypeError(f"event {event.seq} is no feedback: {event.type}")
    applied = status == "applied"
    return ImproveResult(
        status=status,
        node_updates=len(given.nodes) if applied else 0,
        edge_updates=len(given.relationships) if applied else 0,
        seq=event.seq,
        event_id=event.event_id,
    )


class FeedbackOperations:
    """``graph_improve`` as a typed method of the ``Gate``."""

    writer: Writer
    default_actor: Actor
    feedback: FeedbackSettings
    limits: Callable[[], Limits]

    def graph_improve(
        self,
        *,
        session_id: str,
        outcome: Outcome,
        used_node_ids: Sequence[str] = (),
        used_edge_keys: Sequence[EdgeKey] = (),
        answer_id: str | None = None,
        source: str | None = None,
        extraction_method: str | None = None,
        reliability: float | None = None,
        actor: Actor | None = None,
        guard: WriteGuard | None = None,
    ) -> ImproveResult | Rejected:
        """Feedback on one answer: the weights of the nodes and relationships it used move
        toward the outcome's target, once per (agent, session_id, answer_id)."""
        arguments: dict[str, Any] = {
            "sessionId": session_id,
            "outcome": outcome,
            "usedNodeIds": list(used_node_ids),
            "usedEdgeKeys": [key.model_dump(by_alias=True) for key in used_edge_keys],
        }
        given = {
            "answerId": answer_id,
            "source": source,
            "extraction_method": extraction_method,
            "reliability": reliability,
        }
        arguments.update({name: value for name, value in given.items() if value is not None})
        improvements = Improvements(self.writer, self.feedback.alpha, self.limits())
        return improvements.improve(arguments, actor or self.default_actor, guard)
