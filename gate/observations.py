"""Recording an observation: the text an agent read or heard, kept so facts can cite it.

The same path as any write (``gate.writing``): the request's size, parsing, an idempotent
retry answered from the log, the provenance computed against the schema snapshot, then
one write transaction in which the transport's write guard sees what would be appended.
The observation's id is its content's (``language.observations``): recording one the
read model already holds appends nothing and answers ``unchanged``, with the event that
recorded it. A long text (a document, up to ``Limits.max_document_bytes``) is one
observation too, cut into passages here (``gate.passages``) and the cuts kept in its event.
An observation is kept in a scope the schema names (the implicit one unless
the writer names another): only readers granted it find it. A refusal appends nothing and
is recorded in the rejections table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from writegate.eventlog import Actor, Event, EventCore, Transaction
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sealing import SealedRequest
from writegate.gate import citations
from writegate.gate.authority import of_lineage
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.limits import check_request, check_text
from writegate.gate.models import IDEMPOTENCY, Cited, Declared, Rejected, cites, parse_request
from writegate.gate.moments import InCalendar
from writegate.gate.passages import document_starts
from writegate.gate.personal import (
    random_observation,
    seal_text,
    sealed_observations,
    sealed_text,
)
from writegate.gate.results import REFUSALS
from writegate.gate.schema import LoadedSchema
from writegate.gate.scopes import check_known_scope
from writegate.gate.writing import WriteGuard, Writer
from writegate.language import (
    DEFAULT_SCOPE,
    IDENTIFIER,
    ObservationRecorded,
    draft,
    observation_id,
    observation_stream,
    payload_of,
)

OPERATION = "record_observation"


class RecordObservationRequest(Declared):
    text: StrictStr = Field(
        min_length=1,
        description="The text as read or heard, kept whole.",
    )
    said_at: InCalendar | None = Field(
        default=None,
        description="When it was said (default: when recorded).",
    )
    session: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The conversation it belongs to, as you name it.",
    )
    scope: StrictStr | None = Field(
        default=None,
        pattern=f"^{IDENTIFIER.pattern}$",
        description="Its scope (only readers granted it find it).",
    )
    idempotency_key: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description=IDEMPOTENCY,
    )


class DerivedObservationRequest(RecordObservationRequest):
    """An observation with the observations it was extracted from (a note taken from a
    transcript, a summary of a document): its provenance names them, and its authority is
    no higher than theirs (``gate.authority``). Asked through ``writegate observe --observation``
    and the Python API; the MCP tool's arguments leave it out (its catalogue is at its
    budget), so an agent's call naming it is refused as any unknown argument."""

    observations: Cited = cites()


class ObservationResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal["recorded", "unchanged"]  # unchanged: the log held it already
    observation_id: str  # cite it in write_node / write_relationship (observations)
    seq: int  # the event that recorded it
    event_id: str
    # a document's passages: where each starts (cite one as <observation_id>#<start>);
    # left out for a text kept as one passage
    passages: list[int] | None = Field(default=None, exclude_if=lambda v: v is None)


class Observations:
    """Recording observations over one gate's ``Writer``."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.state = writer.planner.state

    def record_observation(
        self, arguments: Mapping[str, Any], actor: Actor, guard: WriteGuard | None
    ) -> ObservationResult | Rejected:
        """Keep one observation, on its arguments exactly as sent (the event's request)."""
        writer, raw = self.writer, dict(arguments)
        try:
            limits = writer.limits()
            check_request(raw, limits)
            request = parse_request(DerivedObservationRequest, raw)
            if not request.text.strip():
                raise GateRejection(
                    ErrorCode.INVALID_ARGUMENT, "text must not be empty", {"field": "text"}
                )
            check_text(request.text, limits, "text")
            key = request.idempotency_key
            chance = random_observation(actor.agent, key)

            def bound(snapshot: LoadedSchema) -> Any:
                """A sealed text's request binds its key by the text's seal."""
                sealed = sealed_observations(snapshot)
                return SealedRequest(raw, sealed_text(chance)) if sealed else raw

            earlier = writer.earlier(actor, key, bound)
            if earlier is not None:
                return _recorded(earlier)
            said = format_timestamp(request.said_at) if request.said_at is not None else None
            scope = None if request.scope == DEFAULT_SCOPE else request.scope
            starts = document_starts(request.text)
            observed = ObservationRecorded(
                observation=observation_id(request.text, request.source, said, scope),
                text=request.text,
                said_at=said,
                session=request.session,
                scope=scope,
                passages=starts if len(starts) > 1 else None,
            )

            def plan(snapshot: LoadedSchema) -> Any:
                nonlocal observed
                check_known_scope(snapshot, request.scope)
                sealed = sealed_observations(snapshot)
                if sealed:  # its content's digest would tell of its text: an id of chance
                    observed = observed.model_copy(update={"observation": chance})
                stated = writer.planner.provenance(request, snapshot)
                cited = list(dict.fromkeys(request.observations or ())) or None
                stated = stated.model_copy(update={"observations": cited})

                def decide(tx: Transaction) -> None:
                    if cited:
                        citations.held(self.state, tx.conn, cited)
                    if self.state.observation(tx.conn, observed.observation) is None:
                        provenance = of_lineage(self.state, tx, stated, snapshot.authority)
                        event = draft(
                            observed,
                            [observed.stream],
                            provenance=provenance,
                            request=raw,
                            expected={observed.stream: 0},
                        )
                        tx.sealing = seal_text(tx, observed.observation) if sealed else None
                        tx.emit(event)
                        tx.sealing = None
                    if guard is not None:
                        guard(actor, tx.events)

                return decide

            outcome = writer.append_planned(plan, actor, key, bound)
            if outcome.events:
                return _recorded(outcome.events)
            first = writer.log.latest(observation_stream(observed.observation))
            if first is None:  # the read model holds an observation the log does not
                raise RuntimeError(f"observation {observed.observation} has no event")
            return ObservationResult(
                status="unchanged",
                observation_id=observed.observation,
                seq=first.seq,
                event_id=first.event_id,
                passages=_passages(first),
            )
        except REFUSALS as exc:
            return writer.refused(actor, OPERATION, exc, raw)


def _recorded(events: Sequence[Event]) -> ObservationResult:
    """The result of the append that recorded an observation (its one event)."""
    payload = payload_of(events[-1])
    if not isinstance(payload, ObservationRecorded):
        raise TypeError(f"event {events[-1].seq} did not record an observation")
    return ObservationResult(
        status="recorded",
        observation_id=payload.observation,
        seq=events[-1].seq,
        event_id=events[-1].event_id,
        passages=payload.passages,
    )


def _passages(event: EventCore) -> list[int] | None:
    """The passages the event recording an observation cut its text into."""
    payload = payload_of(event)
    return payload.passages if isinstance(payload, ObservationRecorded) else None
