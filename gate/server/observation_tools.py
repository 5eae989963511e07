"""Observations over MCP: keep the text an agent read or heard, find it again by its words,
open it by id. Faces over ``gate.observations`` and ``gate.reads.observations``, the same
calls as ``writegate observe``, ``writegate search --observations`` and ``writegate show
observation``. A fact cites observations by id (``write_node``'s ``observations``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from writegate.gate.models import Rejected
from writegate.gate.observations import ObservationResult, Observations, RecordObservationRequest
from writegate.gate.reads.observations import ObservationPage, ObservationView
from writegate.gate.scopes import Scopes
from writegate.gate.server.tools import ToolCall, ToolSpec, tool

_ARGS = ConfigDict(extra="forbid", frozen=True)


class RecordObservationArgs(RecordObservationRequest):
    pass


class SearchObservationsArgs(BaseModel):
    model_config = _ARGS

    query: StrictStr = Field(
        min_length=1, max_length=500, description="Words to find in observations' text."
    )
    limit: StrictInt = Field(default=25, ge=1, le=500, description="At most this many matches.")
    cursor: StrictStr | None = Field(
        default=None, description="The next_cursor of the previous page."
    )


class OpenObservationArgs(BaseModel):
    model_config = _ARGS

    observation_id: StrictStr = Field(
        min_length=1, max_length=100, description="The id record_observation answered."
    )


@tool("write")
def record_observation(call: ToolCall, args: RecordObservationArgs) -> ObservationResult | Rejected:
    """Keep a text you read or heard; cite its observation_id in the writes of facts taken
    from it. The same text, source and time is kept once."""
    return Observations(call.gate.writer).record_observation(call.raw, call.actor, call.guard)


@tool("read", read_only=True)
def search_observations(call: ToolCall, args: SearchObservationsArgs) -> ObservationPage:
    """Observations matching the query's words, best first, with the facts taken from them.
    Plain words, no search syntax."""
    reader = call.gate.observation_reader(Scopes(granted=call.scopes))
    return reader.search_observations(args.query, args.limit, args.cursor)


@tool("read", read_only=True)
def open_observation(call: ToolCall, args: OpenObservationArgs) -> ObservationView:
    """One observation: its text, source, time and the facts from it that stand now."""
    reader = call.gate.observation_reader(Scopes(granted=call.scopes))
    return reader.open_observation(args.observation_id)


OBSERVATION_TOOLS: tuple[ToolSpec, ...] = (
    record_observation,
    search_observations,
    open_observation,
)
