"""Valid time: what was true of a node at one moment, as the log knew it at another.

Two clocks (bi-temporal): *record time*, when the log learned a fact (the event's time,
stamped by the gate), and *valid time*, when the fact held in the world (``valid_from`` /
``valid_to`` as the writer stated them; unstated, from the record time on, still true).

``node_at(log, identity, valid_at=T, as_of=R)`` reads the node's own stream up to record
time R and, for each property, takes the value whose valid interval holds T, the latest
starting one winning (ties: the later record) — so a fact superseded at t2 is still the
answer at t1, and a fact recorded late for an earlier time answers for that time once it is
known, not before. A deletion at record time d ends everything before it for any T ≥ d;
writes recorded after it start the node anew. Nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from writegate.eventlog import Event, Log
from writegate.eventlog.events import format_timestamp, parse_timestamp
from writegate.gate.audit import NodeAsOf
from writegate.language import (
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipWritten,
    node_stream,
    payload_of,
    provenance_of,
)

State = Literal["absent", "present", "deleted"]


@dataclass(frozen=True)
class _Fact:
    """One write of the node: its valid interval and what it set."""

    seq: int
    valid_from: datetime
    valid_to: datetime | None
    changes: dict[str, Any]
    stub: bool
    event: Event

    def holds_at(self, moment: datetime) -> bool:
        return self.valid_from <= moment and (self.valid_to is None or moment < self.valid_to)


@dataclass(frozen=True)
class NodeAt:
    """The node at one valid time, as known at one record time."""

    state: State
    properties: dict[str, Any]
    stub: bool
    version: int  # the stream's version at the record time
    last: Event | None  # the write whose valid time starts latest among those holding


def node_at(log: Log, identity: str, *, valid_at: datetime, as_of: datetime) -> NodeAt:
    stream = node_stream(identity)
    keys = NodeRef.parse(identity).keys
    facts: list[_Fact] = []
    deleted_at: tuple[int, datetime] | None = None  # the last deletion holding at valid_at
    version = 0
    for event in log.iter_events(stream=stream, until=as_of):
        version = event.streams[stream]
        match payload_of(event):
            case NodeWritten() as written:
                facts.append(_written(event, written))
            case RelationshipWritten():
                facts.append(_Fact(event.seq, event.occurred_at, None, {}, True, event))
            case NodeDeleted():
                if event.occurred_at <= valid_at:
                    deleted_at = (event.seq, event.occurred_at)
            case _:
                pass
    after = deleted_at[0] if deleted_at else 0
    holding = [f for f in facts if f.seq > after and f.holds_at(valid_at)]
    if not holding:
        return NodeAt("deleted" if deleted_at else "absent", {}, False, version, None)
    holding.sort(key=lambda f: (f.valid_from, f.seq))
    properties = dict(keys)
    for fact in holding:  # latest valid start last: it wins
        for name, value in fact.changes.items():
            if value is None:
                properties.pop(name, None)
            else:
                properties[name] = value
    stub = all(f.stub for f in holding)
    return NodeAt("present", properties, stub, version, holding[-1].event)


def _written(event: Event, written: NodeWritten) -> _Fact:
    start = parse_timestamp(written.valid_from) if written.valid_from else event.occurred_at
    end = parse_timestamp(written.valid_to) if written.valid_to else None
    return _Fact(event.seq, start, end, dict(written.properties), False, event)


def node_valid_at(log: Log, identity: str, *, valid_at: datetime, as_of: datetime) -> NodeAsOf:
    """``node_at`` as the auditor's view of a node (``show node --valid-at``)."""
    node = node_at(log, identity, valid_at=valid_at, as_of=as_of)
    last = node.last
    provenance = provenance_of(last) if last else None
    return NodeAsOf(
        identity=identity,
        as_of=format_timestamp(as_of),
        valid_at=format_timestamp(valid_at),
        state=node.state,
        version=node.version,
        properties=node.properties,
        stub=node.stub,
        last_seq=last.seq if last else None,
        last_agent=last.actor.agent if last else None,
        last_source=provenance.source if provenance else None,
        confidence=provenance.confidence if provenance else None,
    )
