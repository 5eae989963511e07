"""Who moved which feedback weight, when, and from what to what — computed from the log.

Each ``feedback.given`` event is folded in order by the rule the read model applies
(``language.moved``, at the ``alpha`` the event recorded), so every step is shown with the
weight before and after it, and the last step of each fact is the weight the read model
holds (a test compares them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Log
from writegate.eventlog.events import format_timestamp
from writegate.language import INITIAL_WEIGHT, FeedbackGiven, Outcome, moved, payload_of

_OUT = ConfigDict(extra="forbid", frozen=True)
MAX_MOVES = 5000


class WeightMove(BaseModel):
    """One fact's weight moved by one feedback event."""

    model_config = _OUT

    seq: int
    occurred_at: str
    agent: str  # who gave the feedback (the event's actor)
    session: str | None  # the actor's transport session
    session_id: str  # the answer's session, as the agent named it
    answer_id: str | None
    outcome: Outcome
    alpha: float
    identity: str  # the node's or relationship's
    kind: Literal["node", "relationship"]
    before: float
    after: float


class FeedbackTrail(BaseModel):
    """Weight moves oldest first (of one fact, or all); continue after ``next_cursor``."""

    model_config = _OUT

    identity: str | None
    moves: list[WeightMove]
    weights: dict[str, float] = Field(description="each fact's weight after the last move shown")
    next_cursor: int | None


def feedback_trail(
    log: Log, identity: str | None = None, *, after: int = 0, limit: int = 500
) -> FeedbackTrail:
    """The moves of ``identity``'s weight (every fact's when None) after seq ``after``, at
    most ``limit`` of them; their ``before`` values count every earlier event."""
    limit = max(1, min(limit, MAX_MOVES))
    moves: list[WeightMove] = []
    cursor: int | None = None
    for move in _moves(log, identity):
        if move.seq <= after:
            continue
        if len(moves) >= limit and move.seq != moves[-1].seq:  # one event stays on one page
            cursor = moves[-1].seq
            break
        moves.append(move)
    weights = {m.identity: m.after for m in moves}
    return FeedbackTrail(identity=identity, moves=moves, weights=weights, next_cursor=cursor)


def _moves(log: Log, identity: str | None) -> Iterator[WeightMove]:
    weights: dict[str, float] = {}
    for event in log.iter_events(types=[FeedbackGiven.event_type]):
        given = payload_of(event)
        if not isinstance(given, FeedbackGiven):
            continue
        used: list[tuple[str, Literal["node", "relationship"]]] = [
            *((n, "node") for n in given.nodes),
            *((r.identity, "relationship") for r in given.relationships),
        ]
        for fact, kind in dict.fromkeys(used):
            before = weights.get(fact, INITIAL_WEIGHT)
            after = weights[fact] = moved(before, given.alpha, given.outcome)
            if identity is not None and fact != identity:
                continue
            yield WeightMove(
                seq=event.seq,
                occurred_at=format_timestamp(event.occurred_at),
                agent=event.actor.agent,
                session=event.actor.session,
                session_id=given.session_id,
                answer_id=given.answer_id,
                outcome=given.outcome,
                alpha=given.alpha,
                identity=fact,
                kind=kind,
                before=before,
                after=after,
            )
