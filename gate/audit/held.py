"""What the log holds about a node beyond its trail, for ``gate.audit.subject``: the merges
and unmerges that named it, the observations its writes cite (whole), the writes held for
review that would have written it or one of its relationships, with their decisions, and
the refused requests that named it (the rejections table keeps each as it was sent).

The log keeps no index of these by node, so merges and proposals are read by event type
(as ``audit duplicates`` and the review queue read them), observations by their streams,
and refusals by reading the (bounded) rejections table through: a request names the node
where it gives its label (any case, a leading colon or not) and exactly its merge keys, as
a node, an end of a relationship, or a merge's survivor or duplicate, at any depth (a
batch's items). A request cut at 64 KiB no longer parses and is not matched; one naming the
node by a synonym label is not either.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from writegate.eventlog import Event, Log
from writegate.eventlog.events import format_timestamp
from writegate.gate.rejections import Rejection, RejectionLog
from writegate.language import (
    NodeRef,
    NodesMerged,
    NodesUnmerged,
    ObservationRecorded,
    ProposalDecided,
    WriteProposed,
    observation_stream,
    payload_of,
    proposal_stream,
    provenance_of,
)
from writegate.language.observations import document_of

_OUT = ConfigDict(extra="forbid", frozen=True)


class MergeEvent(BaseModel):
    """A merge or unmerge that touched the node: as the survivor, or as the duplicate."""

    model_config = _OUT

    seq: int
    event_id: str
    occurred_at: str
    type: str
    merge: str
    role: Literal["survivor", "merged"]  # this node's part in it
    other: str  # the other node's identity
    agent: str
    session: str | None
    source: str | None
    extraction_method: str | None
    reason: str
    # a merge: the duplicate's values as they were, and those the survivor took
    merged_properties: dict[str, Any] = Field(default_factory=dict)
    taken: dict[str, Any] = Field(default_factory=dict)


class HeldObservation(BaseModel):
    """An observation a write about the node cited, whole: the words, where they came
    from, who recorded them, and the writes citing them."""

    model_config = _OUT

    observation_id: str
    seq: int
    event_id: str
    occurred_at: str
    agent: str
    session: str | None  # the recording agent's authenticated session
    said_at: str | None
    conversation: str | None  # the session the writer said it belongs to
    source: str | None
    extraction_method: str | None
    scope: str | None
    text: str
    cited_by: list[int]  # the seqs of the writes citing it


class HeldProposal(BaseModel):
    """A write held for review that names the node: its arguments as sent, and the
    reviewer's decision (none yet: pending)."""

    model_config = _OUT

    seq: int
    event_id: str
    occurred_at: str
    proposal: str
    agent: str
    operation: str
    target: str
    arguments: dict[str, Any]
    reason: str
    decision: Literal["pending", "approved", "rejected"]
    decided_by: str | None
    decided_seq: int | None


class _Names(BaseModel):
    """The ways one object of a request names nodes (any other key is ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    label: str | None = None
    merge_keys: dict[str, JsonValue] | None = None
    from_label: str | None = None
    from_keys: dict[str, JsonValue] | None = None
    to_label: str | None = None
    to_keys: dict[str, JsonValue] | None = None
    survivor_keys: dict[str, JsonValue] | None = None
    duplicate_label: str | None = None
    duplicate_keys: dict[str, JsonValue] | None = None

    def nodes(self) -> Iterator[tuple[str, dict[str, JsonValue]]]:
        pairs = (
            (self.label, self.merge_keys),
            (self.from_label, self.from_keys),
            (self.to_label, self.to_keys),
            (self.label, self.survivor_keys),
            (self.duplicate_label or self.label, self.duplicate_keys),
        )
        for label, keys in pairs:
            if label is not None and keys is not None:
                yield label.removeprefix(":").lower(), keys


def refusals(log: Log, identity: str) -> list[Rejection]:
    """Every refused request that named the node, oldest first."""
    ref = NodeRef.parse(identity)
    wanted = (ref.label.lower(), dict(ref.keys))
    return [
        r for r in RejectionLog(log).read() if any(named == wanted for named in _named(r.request))
    ]


def _named(request: str) -> Iterator[tuple[str, dict[str, JsonValue]]]:
    try:
        parsed: JsonValue = orjson.loads(request)
    except orjson.JSONDecodeError:
        return
    for found in _objects(parsed):
        try:
            yield from _Names.model_validate(found).nodes()
        except ValidationError:
            continue  # refused, maybe, for this very shape


def _objects(value: JsonValue) -> Iterator[dict[str, JsonValue]]:
    if isinstance(value, dict):
        yield value
        for inner in value.values():
            yield from _objects(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _objects(inner)


def merges(log: Log, identity: str) -> list[tuple[MergeEvent, Event]]:
    """Every merge and unmerge naming the node, oldest first."""
    found = []
    for event in log.iter_events(types=[NodesMerged.event_type, NodesUnmerged.event_type]):
        payload = payload_of(event)
        if isinstance(payload, NodesMerged):
            ends = (payload.survivor.identity, payload.merged.identity)
        elif isinstance(payload, NodesUnmerged):
            ends = (payload.survivor, payload.restored.identity)
        else:
            continue
        if identity not in ends:
            continue
        claim = provenance_of(event)
        survivor = identity == ends[0]
        record = MergeEvent(
            seq=event.seq,
            event_id=event.event_id,
            occurred_at=format_timestamp(event.occurred_at),
            type=event.type,
            merge=payload.merge,
            role="survivor" if survivor else "merged",
            other=ends[1] if survivor else ends[0],
            agent=event.actor.agent,
            session=event.actor.session,
            source=claim.source if claim else None,
            extraction_method=claim.extraction_method if claim else None,
            reason=payload.reason,
            merged_properties=payload.properties if isinstance(payload, NodesMerged) else {},
            taken=dict(payload.set) if isinstance(payload, NodesMerged) else {},
        )
        found.append((record, event))
    return found


def observations(log: Log, events: Iterable[Event]) -> list[HeldObservation]:
    """Every observation the ``events`` cite, whole, in the order first cited (a cited
    passage's document, whole)."""
    citing: dict[str, list[int]] = {}
    for event in sorted(events, key=lambda e: e.seq):
        claim = provenance_of(event)
        for observation in (claim.observations if claim else None) or ():
            seqs = citing.setdefault(document_of(observation), [])
            if event.seq not in seqs:  # two passages of one document, cited by one write
                seqs.append(event.seq)
    found = []
    for observation, seqs in citing.items():
        kept = log.latest(observation_stream(observation))
        payload = payload_of(kept) if kept is not None else None
        if kept is None or not isinstance(payload, ObservationRecorded):
            continue  # a copy cut short: the trail shows the id with an empty excerpt
        claim = provenance_of(kept)
        found.append(
            HeldObservation(
                observation_id=observation,
                seq=kept.seq,
                event_id=kept.event_id,
                occurred_at=format_timestamp(kept.occurred_at),
                agent=kept.actor.agent,
                session=kept.actor.session,
                said_at=payload.said_at,
                conversation=payload.session,
                source=claim.source if claim else None,
                extraction_method=claim.extraction_method if claim else None,
                scope=payload.scope,
                text=payload.text,
                cited_by=seqs,
            )
        )
    return found


def proposals(log: Log, identity: str) -> list[HeldProposal]:
    """Every held write whose target is the node or a relationship at it, oldest first."""
    found = []
    ends = (f"({identity})-[", f"]->({identity})")
    for event in log.iter_events(types=[WriteProposed.event_type]):
        held = payload_of(event)
        if not isinstance(held, WriteProposed):
            continue
        target = held.target
        if target != identity and not (target.startswith(ends[0]) or target.endswith(ends[1])):
            continue
        decided = _decision(log, held.proposal)
        found.append(
            HeldProposal(
                seq=event.seq,
                event_id=event.event_id,
                occurred_at=format_timestamp(event.occurred_at),
                proposal=held.proposal,
                agent=event.actor.agent,
                operation=held.operation,
                target=target,
                arguments=held.arguments,
                reason=held.reason,
                decision=decided[0].decision if decided else "pending",
                decided_by=decided[0].reviewer if decided else None,
                decided_seq=decided[1] if decided else None,
            )
        )
    return found


def _decision(log: Log, proposal: str) -> tuple[ProposalDecided, int] | None:
    for event in log.iter_events(stream=proposal_stream(proposal)):
        decided = payload_of(event)
        if isinstance(decided, ProposalDecided):
            return decided, event.seq
    return None
