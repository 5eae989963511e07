"""Valid time: what was true of a node or relationship at one moment, as the log knew it at
another — rebuilt from the log, nothing stored.

Two clocks (bi-temporal): *record time*, when the log learned a fact (the event's time,
stamped by the gate), and *valid time*, when the fact held in the world (``valid_from`` /
``valid_to`` as the writer stated them; unstated, from the record time on, still true).

A node's facts are its writes, each holding over its own interval. Where facts about one
property overlap, the one recorded later wins — so a write that replaces a value closes the
old fact's valid time at its own ``valid_from`` (at its record time when it states none),
and only over its own interval: a backdated replacement answers from its stated start, a
forward-dated one from then on (the old value still answers before), and a late-recorded
bounded fact (an intern from T0 to T1) changes the answer for [T0, T1) only. A deletion at
record time d closes everything recorded before it for any T ≥ d; writes recorded after it
start the node anew. A node a relationship created (a stub) is there from that relationship's
valid start.

A relationship is one fact per *spell* (from a write to the deletion that ends it), over one
interval: from its first write's ``valid_from`` (or record time) — a later write's stated
bounds replace the spell's, unstated ones are kept, as ``SET +=`` keeps properties — to the
deletion that ends the spell, at its record time, or, for a functional relationship replaced
by another, at the successor's ``valid_from`` (its record time when it states none).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from writegate.eventlog import Event, Log
from writegate.eventlog.events import parse_timestamp
from writegate.language import (
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipDeleted,
    RelationshipWritten,
    node_stream,
    payload_of,
    relationship_stream,
)
from writegate.projections.state import merge_properties

State = Literal["absent", "present", "deleted"]


def _holds(start: datetime, end: datetime | None, moment: datetime) -> bool:
    return start <= moment and (end is None or moment < end)


@dataclass(frozen=True)
class _Fact:
    """One write of the node: its valid interval and what it set."""

    seq: int
    valid_from: datetime
    valid_to: datetime | None
    changes: dict[str, Any]
    stub: bool
    event: Event


@dataclass(frozen=True)
class NodeAt:
    """The node at one valid time, as known at one record time."""

    state: State
    properties: dict[str, Any]
    stub: bool
    version: int  # the stream's version at the record time
    last: Event | None  # the write recorded last among those holding


def node_at(log: Log, identity: str, *, valid_at: datetime, as_of: datetime) -> NodeAt:
    stream = node_stream(identity)
    keys = NodeRef.parse(identity).keys
    facts: list[_Fact] = []
    deleted_at: int | None = None  # the seq of the last deletion holding at valid_at
    version = 0
    for event in log.iter_events(stream=stream, until=as_of):
        version = event.streams[stream]
        match payload_of(event):
            case NodeWritten() as written:
                keys = keys or written.node.keys  # a pseudonym names no keys: its event does
                start = _stated(written.valid_from) or event.occurred_at
                end = _stated(written.valid_to)
                facts.append(_Fact(event.seq, start, end, dict(written.properties), False, event))
            case RelationshipWritten() as written:  # created as this relationship's stub:
                start = _stated(written.valid_from) or event.occurred_at  # there while it is
                facts.append(_Fact(event.seq, start, None, {}, True, event))
            case NodeDeleted():
                if event.occurred_at <= valid_at:
                    deleted_at = event.seq
            case _:
                pass
    after = deleted_at or 0
    holding = [
        f for f in facts if f.seq > after and _holds(f.valid_from, f.valid_to, valid_at)
    ]  # in record order: a later-recorded fact wins where it holds
    if not holding:
        return NodeAt("deleted" if deleted_at else "absent", {}, False, version, None)
    properties = dict(keys)
    for fact in holding:
        properties = merge_properties(properties, fact.changes)
    stub = all(f.stub for f in holding)
    return NodeAt("present", properties, stub, version, holding[-1].event)


def _stated(stamp: str | None) -> datetime | None:
    return parse_timestamp(stamp) if stamp else None


# -- relationships ----------------------------------------------------------------------


@dataclass
class Spell:
    """One life of a relationship: from a write to the deletion that ends it (if any)."""

    identity: str
    type: str
    from_identity: str
    to_identity: str
    valid_from: datetime
    valid_to: datetime | None
    last: Event  # its latest write
    version: int  # the stream's version at its latest event
    properties: dict[str, Any] = field(default_factory=dict)
    ended: Event | None = None  # the deletion that ended it
    superseded_by: str | None = None  # the functional relationship that replaced it

    def holds_at(self, moment: datetime) -> bool:
        return _holds(self.valid_from, self.valid_to, moment)


def spells(log: Log, identity: str, as_of: datetime) -> list[Spell]:
    """The relationship's spells as the log knew them at ``as_of``, in record order."""
    stream = relationship_stream(identity)
    found: list[Spell] = []
    live: Spell | None = None
    for event in log.iter_events(stream=stream, until=as_of):
        match payload_of(event):
            case RelationshipWritten() as written:
                start, end = _stated(written.valid_from), _stated(written.valid_to)
                if live is None:
                    live = Spell(
                        identity,
                        written.type,
                        written.from_node.identity,
                        written.to_node.identity,
                        start or event.occurred_at,
                        end,
                        event,
                        event.streams[stream],
                    )
                    found.append(live)
                live.valid_from = start or live.valid_from
                live.valid_to = end or live.valid_to
                live.properties = merge_properties(live.properties, written.properties)
                live.last, live.version = event, event.streams[stream]
            case RelationshipDeleted() as deleted if live is not None:
                closed = _closing(log, event, deleted)
                live.valid_to = min(closed, live.valid_to) if live.valid_to else closed
                live.ended, live.superseded_by = event, deleted.superseded_by
                live.version = event.streams[stream]
                live = None
            case _:
                pass
    return found


def _closing(log: Log, event: Event, deleted: RelationshipDeleted) -> datetime:
    """When a deletion ends a relationship's valid time: its record time, or the stated
    ``valid_from`` of the relationship that replaced it (written in the same append)."""
    if deleted.superseded_by is None:
        return event.occurred_at
    successor = log.read(
        after_seq=event.seq, limit=1, stream=relationship_stream(deleted.superseded_by)
    ).events
    written = payload_of(successor[0]) if successor else None
    if isinstance(written, RelationshipWritten) and written.valid_from:
        return parse_timestamp(written.valid_from)
    return event.occurred_at


def relationship_at(
    log: Log, identity: str, *, as_of: datetime, valid_at: datetime | None = None
) -> tuple[State, Spell | None]:
    """The relationship at record time ``as_of`` (its live spell then), or, given
    ``valid_at``, the spell recorded last among those whose valid time holds it. Deleted
    (ended before): the last spell that ended, as it ended."""
    known = spells(log, identity, as_of)
    if valid_at is None:
        if known and known[-1].ended is None:
            return "present", known[-1]
        return ("deleted", known[-1]) if known else ("absent", None)
    holding = [s for s in known if s.holds_at(valid_at)]
    if holding:
        return "present", holding[-1]
    ended = [s for s in known if s.ended and s.valid_to is not None and s.valid_to <= valid_at]
    return ("deleted", ended[-1]) if ended else ("absent", None)


def touching(log: Log, identity: str, as_of: datetime | None = None) -> list[str]:
    """Every relationship that started or ended at the node up to ``as_of``, in the order
    first written (``touching_many`` for one node)."""
    return touching_many(log, [identity], as_of)[identity]


def touching_many(
    log: Log, identities: Iterable[str], as_of: datetime | None = None
) -> dict[str, list[str]]:
    """For each node, every relationship that started or ended at it up to ``as_of``, in the
    order first written. The log has no index of a node's past relationships, so this reads
    the relationship writes recorded since the earliest of the nodes' first events, once for
    all of them: an auditor's question, whose cost is the log's length since then."""
    found: dict[str, dict[str, None]] = {identity: {} for identity in identities}
    firsts = {
        identity: first[0].seq
        for identity in found
        if (first := log.read(limit=1, stream=node_stream(identity)).events)
    }
    if not firsts:
        return {identity: [] for identity in found}
    for event in log.iter_events(
        after_seq=min(firsts.values()) - 1, until=as_of, types=[RelationshipWritten.event_type]
    ):
        written = payload_of(event)
        if not isinstance(written, RelationshipWritten):
            continue
        for end in (written.from_node.identity, written.to_node.identity):
            if end in firsts and event.seq >= firsts[end]:
                found[end][written.identity] = None
    return {identity: list(rids) for identity, rids in found.items()}


def stub_keys(written: RelationshipWritten, identity: str) -> dict[str, Any]:
    """The keys of the end ``identity`` that the relationship write created as a stub."""
    return next(dict(s.keys) for s in written.stubs_created if s.identity == identity)
