"""The tool that forgets a subject: ``forget_subject``, the same call as ``writegate forget``.

In the policy's ``forget`` group, which the default roles give to admins only: erasing a
person's data is an operator's decision, recorded in the log as its receipt.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from writegate.gate.forgetting import ForgetResult
from writegate.gate.models import Rejected
from writegate.gate.server.tools import ToolCall, ToolSpec, tool


class ForgetSubjectArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: StrictStr = Field(min_length=1, max_length=64, description="A personal label.")
    keys: dict[str, StrictStr | StrictInt | StrictFloat | StrictBool] = Field(
        min_length=1, description="The node's merge keys, as it was written with them."
    )
    reason: StrictStr = Field(
        min_length=1, max_length=1000, description="Why: kept in the receipt event."
    )
    dry_run: StrictBool = Field(
        default=False, description="Say what would go (events, stores) and change nothing."
    )


@tool("forget", destructive=True)
def forget_subject(call: ToolCall, args: ForgetSubjectArgs) -> ForgetResult | Rejected:
    """Erase one personal node's data: its sealed values in the log (the events stay and
    still verify, their values read null), its rows in the read model and text index, and
    the refused requests that held its keys; appends a subject.forgotten receipt."""
    return call.gate.forget(
        args.label, args.keys, reason=args.reason, dry_run=args.dry_run, actor=call.actor
    )


FORGET_TOOLS: tuple[ToolSpec, ...] = (forget_subject,)
