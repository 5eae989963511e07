"""The one page an auditor can hand on: size, chain, who wrote and who was refused, drift,
and the writes waiting for a reviewer. ``writegate report`` and the auditors' ``report``
tool answer with it."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from writegate.eventlog.events import format_timestamp
from writegate.gate.audit.activity import Activity, Tally
from writegate.gate.audit.auditor import Auditor, Histogram, histogram, subject_of
from writegate.gate.review import Proposal
from writegate.language import (
    GraphPayload,
    NodeWritten,
    RelationshipWritten,
    payload_of,
    provenance_of,
)

if TYPE_CHECKING:
    from writegate.gate.api import Gate

_OUT = ConfigDict(extra="forbid", frozen=True)


class ProjectionLag(BaseModel):
    model_config = _OUT

    name: str
    checkpoint: int | None
    lag: int | None
    error: str | None = None


class Report(BaseModel):
    """One page an auditor can hand on."""

    model_config = _OUT

    events: int
    head_seq: int
    head_hash: str
    chain_ok: bool
    chain_detail: str
    first_at: str | None
    last_at: str | None
    writes_by_agent: dict[str, int]
    rejections_by_agent: dict[str, int]
    rejections_by_code: dict[str, int]
    writes_by_method: dict[str, int]
    writes_by_label: dict[str, int]
    confidence: Histogram
    remaps: dict[str, int]  # "':person' -> Person": how often schema drift was caught
    unresolved_stubs: int
    superseded: int  # held values writes replaced (kept in their events: `audit conflicts`)
    pending_reviews: int  # writes held for a reviewer (`review list`)
    review_queue: list[Proposal]  # the oldest of them: who, what, when, why
    projections: list[ProjectionLag]
    activity: Activity  # each agent's writes and refusals by hour or day (bounded)


def _sorted(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def gate_report(gate: Gate, projections: list[ProjectionLag]) -> Report:
    """The report of ``gate``'s log, with ``projections``' lag as the caller found it."""
    log = gate.log
    with log.snapshot():
        conn = log.connection()
        stubs = gate.state.counts(conn).stubs
        if gate.state.keeps_reviews(conn):
            queue = gate.reviews.queue()  # the oldest pending proposals listed, all counted
            pending, proposals = queue.pending, queue.proposals
        else:
            pending, proposals = 0, []
        return build_report(Auditor(log), stubs, projections, pending, proposals)


def build_report(
    auditor: Auditor,
    unresolved_stubs: int,
    projections: list[ProjectionLag],
    pending_reviews: int = 0,
    review_queue: list[Proposal] | None = None,
) -> Report:
    log = auditor.log
    with log.snapshot():  # the chain, the head and the counts from one commit
        verified = log.verify()
        head_seq, head_hash = log.head()
        by_agent: Counter[str] = Counter()
        by_method: Counter[str] = Counter()
        by_label: Counter[str] = Counter()
        remaps: Counter[str] = Counter()
        confidences: list[float] = []
        superseded = 0
        tally = Tally()
        first = last = None
        for event in log.iter_events():
            first = first or event
            last = event
            payload = payload_of(event)
            if not isinstance(payload, GraphPayload):
                continue
            provenance = provenance_of(event)
            by_agent[event.actor.agent] += 1
            tally.wrote(format_timestamp(event.occurred_at), event.actor.agent)
            by_method[provenance.extraction_method if provenance else "?"] += 1
            if subject := subject_of(payload):
                by_label[subject[0]] += 1
            match payload:
                case NodeWritten(node=node) if node.remapped_from:
                    remaps[f"{node.remapped_from} -> {node.label}"] += 1
                case RelationshipWritten(remapped_from=crumb) if crumb:
                    remaps[f"{crumb} -> {payload.type}"] += 1
            if isinstance(payload, NodeWritten | RelationshipWritten):
                superseded += len(payload.superseded or ())
                if provenance:
                    confidences.append(provenance.confidence)
    rejected = list(auditor.rejections.read())
    for refusal in rejected:
        tally.refused(refusal.at, refusal.agent)
    return Report(
        events=head_seq,
        head_seq=head_seq,
        head_hash=head_hash,
        chain_ok=verified.ok,
        chain_detail=verified.describe(),
        first_at=format_timestamp(first.occurred_at) if first else None,
        last_at=format_timestamp(last.occurred_at) if last else None,
        writes_by_agent=_sorted(by_agent),
        rejections_by_agent=_sorted(Counter(r.agent for r in rejected)),
        rejections_by_code=_sorted(Counter(r.error_code for r in rejected)),
        writes_by_method=_sorted(by_method),
        writes_by_label=_sorted(by_label),
        confidence=histogram(confidences),
        remaps=_sorted(remaps),
        unresolved_stubs=unresolved_stubs,
        superseded=superseded,
        pending_reviews=pending_reviews,
        review_queue=review_queue or [],
        projections=projections,
        activity=tally.activity(),
    )
