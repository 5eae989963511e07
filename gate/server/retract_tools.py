"""The tools that take back what a source said, and put it back: ``retract_source`` and
``unretract_source``, the same calls as ``writegate retract`` / ``unretract``.

In the policy's ``review`` group (reviewers and admins; the default agent catalogue never
lists them). ``retract_source`` answers the impact report until called with
``confirm: true``: nothing is taken back by a call that has not seen what it takes.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from writegate.gate.models import Rejected
from writegate.gate.retraction import RetractResult
from writegate.gate.server.tools import ToolCall, ToolSpec, tool
from writegate.gate.unretraction import UnretractResult

_ARGS = ConfigDict(extra="forbid", frozen=True)


class RetractSourceArgs(BaseModel):
    model_config = _ARGS

    source: StrictStr | None = Field(
        default=None, min_length=1, max_length=500, description="Take back what this source said."
    )
    agent: StrictStr | None = Field(
        default=None, min_length=1, max_length=500, description="... what this agent wrote."
    )
    method: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="... what this extraction method found.",
    )
    observation: StrictStr | None = Field(
        default=None, min_length=1, max_length=500, description="... what cites this observation."
    )
    since: StrictStr | None = Field(default=None, description="From this ISO 8601 time.")
    until: StrictStr | None = Field(default=None, description="Before this ISO 8601 time.")
    reason: StrictStr = Field(default="", max_length=2000, description="Why (needed to confirm).")
    confirm: StrictBool = Field(
        default=False, description="false: the impact report only; true: take it back."
    )


class UnretractSourceArgs(BaseModel):
    model_config = _ARGS

    retraction: StrictStr = Field(min_length=1, max_length=64, description="The r-… id.")
    reason: StrictStr = Field(default="", max_length=2000, description="Why.")


@tool("review", destructive=True)
def retract_source(call: ToolCall, args: RetractSourceArgs) -> RetractResult | Rejected:
    """Take back what a source, agent, method or observation said (within a window): the
    impact report first (facts that lose their only support, facts kept at a lower
    confidence, merges proposed for undoing, observations); confirm: true does it."""
    return call.gate.retract(
        source=args.source,
        agent=args.agent,
        method=args.method,
        observation=args.observation,
        since=args.since,
        until=args.until,
        reason=args.reason,
        dry_run=not args.confirm,
        actor=call.actor,
    )


@tool("review")
def unretract_source(call: ToolCall, args: UnretractSourceArgs) -> UnretractResult | Rejected:
    """Undo a retraction: each fact it changed put back with its values, supports and
    confidences (a fact written since is left as it is and named)."""
    return call.gate.unretract(args.retraction, reason=args.reason, actor=call.actor)


RETRACT_TOOLS: tuple[ToolSpec, ...] = (retract_source, unretract_source)
