"""The review lane: writes held for a reviewer, and the reviewer's decisions — all events.

A write is held when its computed confidence is below its label's or type's
``review_below``, when a review rule of the schema covers it (its extraction method, from an
agent that has not yet had enough writes approved), or when it would change a fact whose
conflict policy is ``review``. It is appended as ``write.proposed`` (the operation and
arguments as sent, the provenance computed as for any write) and changes nothing else: no
state, no projection. A reviewer
approves it — the write is then planned against today's schema and state (today's conflict
checks, nothing held again) and appended with the decision, in one transaction, as its
writer's — or rejects it, which leaves the graph untouched and the trail complete. Either
decision is the reviewer's event (its actor; it names the writer too), so ``log --agent``
and ``audit agent`` find it under the reviewer while the approved value stays the writer's;
a proposal is decided once (the decision expects its stream at version 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Literal
from uuid import uuid4

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Actor, Event, Transaction, VersionConflict
from writegate.eventlog.events import format_timestamp
from writegate.gate.conflicts import Held
from writegate.gate.corroboration import SINGLE, Unchanged, answered, quietly
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import ItemResult, Rejected, parse_request
from writegate.gate.personal import planned
from writegate.gate.results import REFUSALS, rejected, result_of
from writegate.gate.retraction import UNMERGE
from writegate.gate.schema import LoadedSchema
from writegate.gate.schema.document import ReviewRule
from writegate.gate.schema.registry import RelationshipEntry, SchemaEntry
from writegate.language import (
    ProposalDecided,
    WriteProposed,
    WriteProvenance,
    draft,
    payload_of,
    provenance_of,
)
from writegate.projections.state import StateReader

if TYPE_CHECKING:  # planning calls ``proposing`` and the gate builds ``Reviews``: types only
    from writegate.gate.api import Gate
    from writegate.gate.planning import Emitter

_OUT = ConfigDict(extra="forbid", frozen=True)
Decision = Literal["approve", "reject"]


def proposing(
    emit: Emitter,
    operation: str,
    raw: dict[str, Any],
    provenance: WriteProvenance,
    target: str,
    entry: SchemaEntry | RelationshipEntry,
    state: StateReader,
) -> Emitter:
    """``emit``, or — below the entry's confidence floor, under a review rule, or held by a
    ``review`` conflict — the proposal of the same write."""
    floor, method = entry.review_below, provenance.extraction_method
    rules = [
        r for r in entry.review_rules if not r.extraction_methods or method in r.extraction_methods
    ]

    def run(tx: Transaction, item: int | None) -> None:
        ruled, said = _ruled(rules, method, state, tx) if rules else None, provenance
        if floor is not None and provenance.confidence < floor:
            reason = f"confidence {provenance.confidence:g} is below the review floor {floor:g}"
        elif ruled is not None:
            reason = ruled
        else:
            try:
                emit(tx, item)
                return
            except Held as held:
                reason, said = held.reason, held.provenance or provenance
        arguments = {k: v for k, v in raw.items() if k != "idempotency_key"}
        proposed = WriteProposed(
            proposal=uuid4().hex,
            operation=operation,
            arguments=arguments,
            target=target,
            reason=f"held for review: {reason}",
            batch_item=item,
        )
        tx.emit(draft(proposed, [proposed.stream], provenance=said, request=raw))

    return run


def _ruled(
    rules: Sequence[ReviewRule], method: str, state: StateReader, tx: Transaction
) -> str | None:
    """Why a review rule holds this write, or None: a rule holds every write it covers
    (``until_approved: 0``) or those of an agent with fewer approved writes than it asks."""
    agent = tx.actor.agent
    approved: int | None = None
    for rule in rules:
        if rule.until_approved == 0:
            return f"a review rule holds every {method} write here"
        if approved is None:
            approved = state.approved_writes(tx.conn, agent)
        if approved < rule.until_approved:
            return (
                f"a review rule holds {method} writes from an agent until {rule.until_approved} "
                f"of its writes are approved ({agent} has {approved})"
            )
    return None


class Proposal(BaseModel):
    """A held write as a reviewer sees it."""

    model_config = _OUT

    proposal: str
    status: str  # pending, approved or rejected
    seq: int
    proposed_at: str
    agent: str
    operation: str
    target: str
    reason: str
    arguments: dict[str, Any]
    source: str | None
    extraction_method: str | None
    confidence: float | None


class ReviewQueue(BaseModel):
    model_config = _OUT

    pending: int
    proposals: list[Proposal]


class ReviewDecision(BaseModel):
    model_config = _OUT

    status: Literal["decided"] = "decided"  # (a refused call is status "rejected")
    decision: Literal["approved", "rejected"]
    proposal: str
    reviewer: str
    seq: int  # the decision's event
    result: ItemResult | None = None  # what the approved write did


class Reviews:
    """The review lane of one gate: its queue, and decisions (a face over the ``Writer``)."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.log = gate.log
        self.state: StateReader = gate.state

    def queue(self, *, limit: int = 50, pending: bool = True) -> ReviewQueue:
        with self.log.snapshot():
            conn = self.log.connection()
            found = self.state.proposals(conn, pending=pending, limit=limit)
            waiting = self.state.pending_proposals(conn)
            proposals = [self._proposal(pid) for pid, _ in found]
        return ReviewQueue(pending=waiting, proposals=[p for p in proposals if p is not None])

    def show(self, proposal: str) -> Proposal | None:
        return self._proposal(proposal)

    def decide(
        self, proposal: str, decision: Decision, reviewer: Actor, note: str = ""
    ) -> ReviewDecision | Rejected:
        """Approve (append the write as its writer's, with the decision as the reviewer's)
        or reject it (the reviewer's decision alone)."""
        try:
            event = self._pending(proposal)
            held = _proposed(event)
            if reviewer.agent == event.actor.agent and not self._own_allowed(held):
                raise GateRejection(
                    ErrorCode.SELF_REVIEW,
                    f"proposal {proposal} was written by {reviewer.agent}, who may not decide "
                    "it: a held write needs a reviewer other than its writer",
                    {"proposal": proposal, "agent": reviewer.agent},
                )
            decided = ProposalDecided(
                proposal=proposal,
                decision="approved" if decision == "approve" else "rejected",
                reviewer=reviewer.agent,
                note=note,
                writer=event.actor.agent,
            )
            # the reviewer's event, appended with the approved write, which stays the writer's
            record = draft(decided, [decided.stream], expected={decided.stream: 1}, actor=reviewer)
            writer = self.gate.writer
            if decision == "reject":

                def rejecting(snapshot: LoadedSchema) -> Any:
                    return lambda tx: tx.emit(record)

                outcome = writer.append_planned(rejecting, reviewer, None, None)
                return ReviewDecision(
                    decision="rejected",
                    proposal=proposal,
                    reviewer=reviewer.agent,
                    seq=outcome.events[-1].seq,
                )
            if held.operation == UNMERGE:  # a retraction's proposal to undo a merge
                return self._unmerge(proposal, held, reviewer, record)
            operation = writer.operation(held.operation)
            request = parse_request(operation.request, held.arguments)
            planner = writer.planner.approving()

            quiet: dict[int, Unchanged] = {}  # approved, it changed nothing: nothing appended

            def approving(snapshot: LoadedSchema) -> Any:
                then = partial(operation.plan, planner, request, snapshot, held.arguments)
                emit = quietly(planned(writer.log, snapshot, held.arguments, then), quiet)

                def decide(tx: Transaction) -> None:
                    quiet.clear()
                    tx.emit(record)
                    emit(tx, None)

                return decide

            outcome = writer.append_planned(approving, event.actor, None, None)
            return ReviewDecision(
                decision="approved",
                proposal=proposal,
                reviewer=reviewer.agent,
                seq=outcome.events[0].seq,
                result=answered(self.log, quiet[SINGLE])
                if quiet
                else result_of(outcome.events[1:]),
            )
        except VersionConflict:
            return rejected(_not_pending(proposal, "it was decided meanwhile"))
        except REFUSALS as exc:
            return rejected(exc)

    def _unmerge(
        self, proposal: str, held: WriteProposed, reviewer: Actor, record: Any
    ) -> ReviewDecision | Rejected:
        """Approving a retraction's proposal undoes the merge, as the reviewer's own call,
        then records the decision (a refused undoing leaves the proposal pending)."""
        arguments = dict(held.arguments)
        undone = self.gate.unmerge_nodes(
            merge=str(arguments["merge"]),
            source=str(arguments.get("source", "review")),
            extraction_method=str(arguments.get("extraction_method", "manual")),
            reason=str(arguments.get("reason", "")),
            actor=reviewer,
        )
        if isinstance(undone, Rejected):
            return undone

        def deciding(snapshot: LoadedSchema) -> Any:
            return lambda tx: tx.emit(record)

        outcome = self.gate.writer.append_planned(deciding, reviewer, None, None)
        return ReviewDecision(
            decision="approved",
            proposal=proposal,
            reviewer=reviewer.agent,
            seq=outcome.events[-1].seq,
        )

    def _own_allowed(self, held: WriteProposed) -> bool:
        """Whether the schema lets a writer decide its own held write to this label or type
        (``self_review: true``; by default it may not)."""
        registry = self.gate.current_schema().registry
        name = held.arguments.get("label") or held.arguments.get("type")
        if not isinstance(name, str):
            return False
        entry = registry.get_entry(name) or registry.get_relationship_type(name)
        return bool(entry is not None and entry.self_review)

    def _pending(self, proposal: str) -> Event:
        found = self.state.proposal(self.log.connection(), proposal)
        if found is None:
            raise _not_pending(proposal, "no such proposal")
        seq, status = found
        if status != "pending":
            raise _not_pending(proposal, f"it was already {status}")
        return self._event(seq)

    def _event(self, seq: int) -> Event:
        events: list[Event] = self.log.read(after_seq=seq - 1, limit=1).events
        return events[0]

    def _proposal(self, proposal: str) -> Proposal | None:
        found = self.state.proposal(self.log.connection(), proposal)
        if found is None:
            return None
        seq, status = found
        event = self._event(seq)
        held = _proposed(event)
        provenance = provenance_of(event)
        return Proposal(
            proposal=proposal,
            status=status,
            seq=seq,
            proposed_at=format_timestamp(event.occurred_at),
            agent=event.actor.agent,
            operation=held.operation,
            target=held.target,
            reason=held.reason,
            arguments=held.arguments,
            source=provenance.source if provenance else None,
            extraction_method=provenance.extraction_method if provenance else None,
            confidence=provenance.confidence if provenance else None,
        )


def _proposed(event: Event) -> WriteProposed:
    held = payload_of(event)
    if not isinstance(held, WriteProposed):
        raise TypeError(f"event {event.seq} is a {event.type}, not a proposal")
    return held


def _not_pending(proposal: str, why: str) -> GateRejection:
    return GateRejection(
        ErrorCode.PROPOSAL_NOT_PENDING,
        f"proposal {proposal} cannot be decided: {why}",
        {"proposal": proposal},
    )
