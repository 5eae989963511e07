"""A retraction (or its undoing) in a graph store: each fact put as its image after says.

A ``source.retracted`` / ``source.unretracted`` event carries, per fact, what it was and
what it becomes (``language.retractions.FactImage``), so the graph needs no read model to
follow it: a fact with no image after is deleted (a node detached: the event lists its
relationships first), one with an image is given that image's values — the values only the
image before held set to null, the last write's provenance stamped, the supports left as
``_supported_by`` and ``_corroborated_confidence`` where more than one write supports it.
Deletions go first (relationships, then nodes), then nodes put in place, then relationships,
so an undoing that puts a node and its relationship back finds the node. One statement per
fact: a retraction is rare, and each fact's set of values to null is its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from writegate.eventlog import EventCore
from writegate.language import (
    PSEUDONYM,
    FactImage,
    NodeRef,
    RetractedFact,
    SourceRetracted,
    SourceUnretracted,
    WriteProvenance,
    payload_of,
)
from writegate.projections.cypher import (
    PSEUDONYM_KEY,
    Statement,
    found_by,
    pattern,
    pseudonymous,
    quoted,
    scoped,
    stamp,
)

RETRACTIONS = frozenset({SourceRetracted.event_type, SourceUnretracted.event_type})


def retraction_statements(event: EventCore) -> Iterator[Statement]:
    """The statements putting each of the event's facts as its image after says."""
    payload = payload_of(event)
    if not isinstance(payload, SourceRetracted | SourceUnretracted):
        return
    gone = [fact for fact in payload.facts if fact.after is None]
    kept = [fact for fact in payload.facts if fact.after is not None]
    for fact in sorted(gone, key=lambda f: f.kind != "relationship"):
        yield _deleted(fact)
    for fact in sorted(kept, key=lambda f: f.kind != "node"):
        yield _node(fact) if fact.kind == "node" else _relationship(fact)


def _found(identity: str, label: str | None = None) -> tuple[str, dict[str, Any]]:
    """A node's label and the properties it is found by in the graph."""
    if pseudonymous(identity):
        return label or identity.partition(PSEUDONYM)[0], {PSEUDONYM_KEY: identity}
    ref = NodeRef.parse(identity)
    return ref.label, found_by(ref)


def _image(fact: RetractedFact) -> FactImage:
    """The fact's image after, else before (an event names a fact one of them holds)."""
    image = fact.after or fact.before
    if image is None:
        raise ValueError(f"retracted fact {fact.identity} has no image")
    return image


def _ends(image: FactImage) -> tuple[str, str, dict[str, Any], dict[str, Any], str]:
    """Patterns of a relationship's ends (``a``, ``b``), their keys, and its quoted type."""
    start_label, start = _found(image.from_identity or "")
    end_label, end = _found(image.to_identity or "")
    return (
        pattern("a", start_label, sorted(start), "r.from"),
        pattern("b", end_label, sorted(end), "r.to"),
        start,
        end,
        quoted(image.type or ""),
    )


def _deleted(fact: RetractedFact) -> Statement:
    image = _image(fact)
    if fact.kind == "node":
        label, keys = _found(fact.identity, image.label)
        match = pattern("n", label, sorted(keys), "r.keys")
        return Statement(f"UNWIND $rows AS r MATCH {match} DETACH DELETE n", [{"keys": keys}])
    a, b, start, end, rtype = _ends(image)
    cypher = f"UNWIND $rows AS r MATCH {a}-[x:{rtype}]->{b} DELETE x"
    return Statement(cypher, [{"from": start, "to": end}])


def _values(fact: RetractedFact, variable: str) -> tuple[str, dict[str, Any]]:
    """The ``SET`` items giving a fact its image's values, provenance and supports."""
    after = _image(fact)
    dropped = sorted(set(fact.before.properties if fact.before else ()) - set(after.properties))
    provenance = WriteProvenance.model_validate(after.provenance) if after.provenance else None
    several = len({s.source for s in after.support}) > 1 or any(
        s.kind == "corroborated" for s in after.support
    )
    heard = (
        f", {variable}._supported_by = r.sources, {variable}._corroborated_confidence = r.heard"
        if several
        else ""
    )
    nulls = "".join(f", {variable}.{quoted(name)} = null" for name in dropped)
    row = {
        "props": after.properties,
        "confidence": provenance.confidence if provenance else None,
        "source": provenance.source if provenance else None,
        "extraction_method": provenance.extraction_method if provenance else None,
        "write_gate_version": provenance.write_gate_version if provenance else None,
        "at": after.updated_at,
        "sources": list(dict.fromkeys(s.source for s in after.support)),
        "heard": after.support[-1].corroborated if after.support else None,
    }
    return f"SET {variable} += r.props{nulls}, {stamp(variable)}{heard}", row


def _node(fact: RetractedFact) -> Statement:
    after = _image(fact)
    label, keys = _found(fact.identity, after.label)
    values, row = _values(fact, "n")
    named = ", n += r.named" if pseudonymous(fact.identity) else ""
    cypher = (
        f"UNWIND $rows AS r MERGE {pattern('n', label, sorted(keys), 'r.keys')} {values}"
        f", n._stub = {'true' if after.stub else 'null'}{scoped('n', after.scope)}{named}"
    )
    return Statement(cypher, [{**row, "keys": keys, "named": after.keys or {}}])


def _relationship(fact: RetractedFact) -> Statement:
    image = _image(fact)
    a, b, start, end, rtype = _ends(image)
    values, row = _values(fact, "x")
    cypher = f"UNWIND $rows AS r MERGE {a} MERGE {b} MERGE (a)-[x:{rtype}]->(b) {values}"
    return Statement(cypher, [{**row, "from": start, "to": end}])
