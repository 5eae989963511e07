"""Feedback on answers: ``graph_improve`` (seed 004), a face over ``gate.feedback`` (the
same call as ``writegate improve``) in the policy's ``write`` group — an agent that may not
write does not see it, and the labels and types whose weights it would move are asked of
the policy as a write's are (``POLICY_DENIED``); and ``audit_feedback``, who moved which
weight (``gate.audit.feedback``, ``writegate audit feedback``), in the ``audit`` group."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from writegate.gate.audit.feedback import MAX_MOVES, FeedbackTrail, feedback_trail
from writegate.gate.feedback import GraphImproveRequest, Improvements, ImproveResult
from writegate.gate.models import Rejected
from writegate.gate.server.audit_scopes import must_see, whole_log
from writegate.gate.server.tools import ToolCall, ToolSpec, tool


class AuditFeedbackArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    identity: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=5000,
        description="Only this node's or relationship's weight, by identity (default: all).",
    )
    after: StrictInt = Field(
        default=0, ge=0, description="Continue after this seq (the next_cursor of a page)."
    )
    limit: StrictInt = Field(
        default=500, ge=1, le=MAX_MOVES, description="At most this many moves."
    )


@tool("write", gated=True)
def graph_improve(call: ToolCall, args: GraphImproveRequest) -> ImproveResult | Rejected:
    """Feedback on an answer: the nodes and relationships it used move toward 1 (accepted),
    0.5 (rework) or 0 (rejected), reordering later answers."""
    gate = call.gate
    improvements = Improvements(gate.writer, gate.feedback.alpha, gate.limits())
    return improvements.improve(call.raw, call.actor, call.guard)


@tool("audit", read_only=True)
def audit_feedback(call: ToolCall, args: AuditFeedbackArgs) -> FeedbackTrail:
    """Who moved which feedback weight, when, and from what to what, oldest first: each
    graph_improve's outcome, its rate, and every used fact's weight before and after."""
    if args.identity is not None:
        must_see(call, args.identity)
    else:
        whole_log(call, "audit_feedback")
    return feedback_trail(call.gate.log, args.identity, after=args.after, limit=args.limit)


FEEDBACK_TOOLS: tuple[ToolSpec, ...] = (graph_improve, audit_feedback)
