"""A ``subject.forgotten`` receipt in the graph store: the subject's values taken out in place.

The graph holds a personal node's keys and personal properties in the clear (as the events
read when projected). When its subject is forgotten, the log reads those values as ``null``,
and a rebuild would set them ``null`` (removing them). The patch does the same to the live
store, without a rebuild: the events the receipt names are read again from the log as they
now read, and each forgotten node's properties are set again from its writes since its last
deletion, in order. A personal value then is ``null`` and leaves the node; every other value
ends as its last write left it, and nothing else in the store (relationships, stamps,
corroborations) is touched, as nothing else held the subject's values. A node is found by
its pseudonym (``cypher.PSEUDONYM_KEY``), which forgetting leaves as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from writegate.eventlog import Event, EventCore, Log
from writegate.eventlog.sealing import SubjectsForgotten, ValuesExpired
from writegate.language import (
    PSEUDONYM,
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipWritten,
    payload_of,
)
from writegate.projections.contract import ProjectionError
from writegate.projections.cypher import PSEUDONYM_KEY, Statement, pseudonymous, quoted


def forgetting(
    name: str, log: Log | None, receipt: EventCore, erased: dict[str, set[str]] | None = None
) -> Iterator[Statement]:
    """The statements taking ``receipt``'s forgotten values out of the graph (one per label);
    ``erased`` is told each label's keys they set to null (what an index may still hold)."""
    forgot = SubjectsForgotten.model_validate(receipt.payload)
    if not forgot.events:
        return
    if log is None:
        raise ProjectionError(
            f"{name}: event {receipt.seq} forgets a subject, and this projector was given no "
            "log to read its events again from: rebuild the graph from the log"
        )
    subjects = set(forgot.subjects)
    since: dict[str, list[dict[str, object]]] = {}  # identity -> values since its deletion

    def ours(ref: NodeRef) -> bool:
        return pseudonymous(ref.identity) and ref.identity.partition(PSEUDONYM)[2] in subjects

    events = _read(log, forgot.events)
    for seq in sorted(events):
        match payload_of(events[seq]):
            case NodeWritten(node=node, properties=properties) if ours(node):
                since.setdefault(node.identity, []).append({**node.keys, **properties})
            case NodeDeleted(node=node) if ours(node):
                since[node.identity] = []  # a rebuild makes the node again from later writes
            case RelationshipWritten(from_node=start, to_node=end):
                for ref in (start, end):
                    if ours(ref):  # a stub it made holds the keys
                        since.setdefault(ref.identity, []).append(dict(ref.keys))
    by_label: dict[str, Statement] = {}
    for identity, values in since.items():
        label = identity.partition(PSEUDONYM)[0]
        statement = by_label.setdefault(
            label,
            Statement(
                f"UNWIND $rows AS r MATCH (n:{quoted(label)} {{{PSEUDONYM_KEY}: r.id}}) "
                "SET n += r.props"
            ),
        )
        statement.rows += [{"id": identity, "props": props} for props in values]
        if erased is not None:
            nulled = {key for props in values for key, value in props.items() if value is None}
            erased.setdefault(label, set()).update(nulled)
    yield from by_label.values()


def _read(log: Log, seqs: list[int]) -> dict[int, Event]:
    """The events ``seqs`` names, as the log now reads them (in parts: within any database's
    count of parameters)."""
    events: dict[int, Event] = {}
    for first in range(0, len(seqs), 1000):
        events.update(log.read_seqs(seqs[first : first + 1000]))
    return events


def expired_keys(log: Log | None, receipt: EventCore) -> dict[str, set[str]]:
    """Each label's properties whose superseded values a retention's receipt expired (its
    events read again, those values now null): the live graph holds none of them, as a later
    write replaced each, but an index over the property may still hold them in its files.
    Nothing without a log to read them from."""
    said = ValuesExpired.model_validate(receipt.payload)
    found: dict[str, set[str]] = {}
    for event in _read(log, said.events).values() if log is not None else ():
        match payload_of(event):
            case NodeWritten(node=node, superseded=superseded) if pseudonymous(node.identity):
                nulled = {s.property for s in superseded or () if s.property and s.value is None}
                found.setdefault(node.label, set()).update(nulled)
    return found


def index_rebuilds(
    indexes: Iterable[Mapping[str, Any]], erased: Mapping[str, set[str]]
) -> list[str]:
    """The statements rebuilding (dropping and making again, as Cypher has no ``REBUILD
    INDEX``) each node index ``SHOW INDEXES`` lists over a key ``erased`` names: ArcadeDB's
    LSM index files keep a key set to null until the index is rebuilt. An index a
    constraint owns is left (dropping it would drop the constraint)."""
    found: list[str] = []
    for index in indexes:
        labels, keys = list(index.get("labelsOrTypes") or ()), list(index.get("properties") or ())
        if index.get("entityType") != "NODE" or index.get("owningConstraint") or len(labels) != 1:
            continue
        if not set(keys) & erased.get(labels[0], set()):
            continue
        name = quoted(str(index.get("name")))
        on = ", ".join(f"n.{quoted(key)}" for key in keys)
        found += [
            f"DROP INDEX {name} IF EXISTS",
            f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{quoted(labels[0])}) ON ({on})",
        ]
    return found


__all__ = ["expired_keys", "forgetting", "index_rebuilds"]
