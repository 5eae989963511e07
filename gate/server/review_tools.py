"""Tools for the reviewer role: the review lane's queue and the decision on one proposal.

Faces over ``gate.review.Reviews``, the same calls as ``writegate review …``. Agents
without the role never see them (the policy lists tools per role).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from writegate.gate.models import Rejected
from writegate.gate.review import ReviewDecision, ReviewQueue, Reviews
from writegate.gate.server.tools import ToolCall, ToolSpec, tool

_ARGS = ConfigDict(extra="forbid", frozen=True)


class ReviewQueueArgs(BaseModel):
    model_config = _ARGS

    limit: StrictInt = Field(default=50, ge=1, le=500, description="At most this many proposals.")


class ReviewDecideArgs(BaseModel):
    model_config = _ARGS

    proposal: StrictStr = Field(
        min_length=1, max_length=64, description="The proposal's id, from review_queue."
    )
    decision: Literal["approve", "reject"] = Field(
        description="approve: the write is applied now, under today's checks; reject: it is not."
    )
    note: StrictStr = Field(default="", max_length=2000, description="Why, for the audit trail.")


@tool("review", read_only=True)
def review_queue(call: ToolCall, args: ReviewQueueArgs) -> ReviewQueue:
    """The writes held for review (a confidence below the review floor, or a conflict under
    the review policy), oldest first, each with its writer, provenance and reason."""
    return Reviews(call.gate).queue(limit=args.limit)


@tool("review")
def review_decide(call: ToolCall, args: ReviewDecideArgs) -> ReviewDecision | Rejected:
    """Approve or reject one held write; the decision is an event naming you. An approved
    write is appended as its writer's, checked against today's schema and graph."""
    return Reviews(call.gate).decide(args.proposal, args.decision, call.actor, args.note)


REVIEW_TOOLS: tuple[ToolSpec, ...] = (review_queue, review_decide)
