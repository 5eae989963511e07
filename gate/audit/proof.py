"""``prove``: is a saved ``graph_query`` answer true of the log at the seq it was answered at?

An answer carries ``answeredAt`` (the head's seq and hash when it was read) and, per
triplet, the event that last set the relationship. Against a copy of the log (a backup
taken later will do: the chain only grows) the proof checks, in order:

1. the hash chain is intact from genesis up to the answer's seq, and the hash stored at
   that seq is the head hash the answer names (else the log it was read from is not this
   one, or was rewritten);
2. each triplet's event is at its seq with its id, and says what the triplet shows (the
   relationship's ends and type, its source, method and confidence);
3. each fact is still current, or names the later event that superseded or deleted it:
   a later event is no failure, the answer stays true *of its seq*.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from writegate.eventlog import Log
from writegate.language import RelationshipWritten, payload_of, provenance_of
from writegate.language.identities import relationship_stream
from writegate.language.observations import document_of, observation_stream


@dataclass(frozen=True)
class FactProof:
    """One triplet of the answer: the event it cites and whether it is still current."""

    fact: str  # ``FROM -TYPE-> TO`` as the answer shows it
    event_id: str
    seq: int
    current: bool
    replaced_by: str | None = None  # the later event's id, when not current
    replaced_at: int | None = None
    replaced_how: str | None = None  # that event's type (relationship.written: superseded)
    citations: list[str] = field(default_factory=list)  # the events recording its observations


@dataclass(frozen=True)
class ProofReport:
    ok: bool
    seq: int
    head_hash: str
    reason: str | None = None  # the first failure, one line
    bad_event: str | None = None  # the event id the failure names, when one does
    facts: list[FactProof] = field(default_factory=list)

    def describe(self) -> str:
        if not self.ok:
            return f"not proven: {self.reason}"
        stale = [f for f in self.facts if not f.current]
        said = f"proven at seq {self.seq}: {len(self.facts)} facts in the chain"
        for f in stale:
            later = f"{f.replaced_how} {f.replaced_by} at seq {f.replaced_at}"
            said += f"; {f.fact} no longer current ({later})"
        return said

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "seq": self.seq,
            "head_hash": self.head_hash,
            "reason": self.reason,
            "bad_event": self.bad_event,
            "facts": [vars(f) for f in self.facts],
        }


class _Failed(Exception):
    def __init__(self, reason: str, event: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.event = reason, event


def prove(log: Log, answer: Mapping[str, Any]) -> ProofReport:
    """Check ``answer`` (a ``graph_query`` answer as its JSON spells it) against ``log``."""
    at = answer.get("answeredAt") or answer.get("answered_at")
    if not isinstance(at, Mapping):
        return ProofReport(False, 0, "", "the answer names no answeredAt (seq and head hash)")
    seq, head = at.get("seq"), str(at.get("headHash", at.get("head_hash", "")))
    if not isinstance(seq, int):
        return ProofReport(False, 0, head, "the answer's answeredAt names no seq")
    try:
        with log.snapshot():
            _chain(log, seq, head)
            facts = [_fact(log, t, seq) for t in answer.get("triplets", [])]
    except _Failed as failed:
        return ProofReport(False, seq, head, failed.reason, failed.event)
    except (KeyError, TypeError, ValueError) as exc:  # a triplet not as graph_query writes one
        return ProofReport(False, seq, head, f"a triplet is not as graph_query answers: {exc!r}")
    return ProofReport(True, seq, head, facts=facts)


def _chain(log: Log, seq: int, head: str) -> None:
    report = log.verify(to_seq=seq)
    if not report.ok:
        bad = report.first_bad_seq or 0
        found = log.read_seqs([bad]).get(bad)
        event = found.event_id if found else None
        raise _Failed(f"event {event} (seq {bad}): {report.problem}", event)
    if report.head_seq < seq:
        raise _Failed(f"the log ends at seq {report.head_seq}, before the answer's seq {seq}")
    if report.head_hash != head:
        raise _Failed(f"the hash at seq {seq} is not the answer's head hash (another log?)")


def _fact(log: Log, triplet: Mapping[str, Any], at: int) -> FactProof:
    said = triplet["provenance"]
    event_id, seq = str(said["eventId"]), int(said["seq"])
    fact = f"{triplet['sourceEntity']} -{triplet['relationship']}-> {triplet['targetEntity']}"
    if seq > at:
        raise _Failed(f"event {event_id} (seq {seq}) is after the answer's seq {at}", event_id)
    event = log.read_seqs([seq]).get(seq)
    if event is None or event.event_id != event_id:
        raise _Failed(f"event {event_id} is not at seq {seq}", event_id)
    written = payload_of(event)
    provenance = provenance_of(event)
    shown = (triplet["sourceEntity"], triplet["relationship"], triplet["targetEntity"])
    if not isinstance(written, RelationshipWritten) or shown != (
        written.from_node.identity,
        written.type,
        written.to_node.identity,
    ):
        raise _Failed(f"event {event_id} does not say {fact}", event_id)
    if provenance is not None and (
        provenance.source != said.get("source", provenance.source)
        or provenance.extraction_method != said.get("method", provenance.extraction_method)
        or provenance.confidence != said.get("confidence", provenance.confidence)
    ):
        raise _Failed(f"event {event_id} has another source or confidence than shown", event_id)
    citations = [_recorded(log, str(o), at, event_id) for o in said.get("observationIds", [])]
    latest = log.latest(relationship_stream(written.identity))
    if latest is None or latest.seq == seq:
        return FactProof(fact, event_id, seq, True, citations=citations)
    return FactProof(
        fact, event_id, seq, False, latest.event_id, latest.seq, latest.type, citations
    )


def _recorded(log: Log, cited: str, at: int, by: str) -> str:
    """The event that recorded observation ``cited`` by seq ``at`` (the proof fails without)."""
    page = log.read(stream=observation_stream(document_of(cited)), limit=1, to_seq=at)
    if not page.events:
        raise _Failed(f"event {by} cites observation {cited}, not recorded by seq {at}", by)
    return page.events[0].event_id
