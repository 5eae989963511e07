"""Corroboration instead of repetition: a write that would change nothing appends nothing,
unless it brings support the fact did not have.

"The fact" is a node's (or relationship's) current version as a whole: its properties
and the valid time its writer stated. A write to an existing fact whose properties, after
the merge ``SET n += changes`` makes, are the ones held, stating the same valid time (and
moving no scope), says that fact again. Then:

* if its agent, source and extraction method are together already recorded as
  supporting the version (its writer's, or a corroboration's) and it cites no
  observation they did not, it is **unchanged**: nothing is appended, and the answer
  names the version and the event that wrote it (``Unchanged``);
* if they are not, it is a **corroboration**: one ``node.corroborated`` /
  ``relationship.corroborated`` event with its provenance and no new version, carrying the
  fact's confidence by the formula provider's rule (``gate.formula.corroborated``) over
  its distinct sources, each at its best confidence — independence, for the confidence,
  is a distinct source: a second agent or method reading the same source is recorded as
  support but adds no confidence;
* a recorded support citing an observation not yet cited is a write as ever (a version).

Everything else about a write holds for both: its permission, scope guard, review rules
(a write held for review is held, whatever it would have done) and ``if_version``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from writegate.eventlog import Log, Transaction, VersionConflict
from writegate.gate.formula import FormulaProvider, corroborated
from writegate.gate.models import ItemResult, WriteNodeResult, WriteRelationshipResult
from writegate.gate.models import NodeRef as ResultRef
from writegate.language import (
    NodeCorroborated,
    NodeRef,
    RelationshipCorroborated,
    WriteProvenance,
    draft,
    parse_node_identity,
)
from writegate.projections.state import EdgeRow, NodeRow, StateProjection, merge_properties

Emitter = Callable[[Transaction, int | None], None]


class Unchanged(Exception):
    """A write that changes nothing and brings no new support: nothing is appended. Carries
    its answer, but for the ``event_id`` of the event that wrote the version (``seq``),
    which the writer reads from the log (``gate.writing``)."""

    def __init__(self, result: WriteNodeResult | WriteRelationshipResult) -> None:
        super().__init__(f"unchanged at version {result.version}")
        self.result = result


@dataclass(frozen=True)
class Saying:
    """What one write says of a fact that may exist: its changes, stated valid time and
    provenance, the versions it expects, the request it came in, and its batch item."""

    changes: Mapping[str, Any]
    valid: Mapping[str, str]
    provenance: WriteProvenance
    expected: Mapping[str, int]
    request: dict[str, Any]
    item: int | None


@dataclass(frozen=True)
class Heard:
    """A corroboration's numbers: the version it supports, and what supports it now."""

    version: int
    written_seq: int
    confidence: float
    sources: list[str]


class Hearer(Protocol):
    """Who asks (a ``gate.planning.Planner``): the read model and the formula provider."""

    state: StateProjection
    formula: FormulaProvider


def _heard(
    by: Hearer,
    tx: Transaction,
    fact: NodeRow | EdgeRow,
    identity: str,
    saying: Saying,
) -> Heard | None:
    """The corroboration this write is, or None: it changes the fact (or says it again
    citing something new). ``_Quiet``: it brings nothing (its caller answers ``Unchanged``)."""
    if merge_properties(fact.properties, dict(saying.changes)) != fact.properties:
        return None
    supports = by.state.support(tx.conn, identity)
    made = [s for s in supports if s.kind == "written" and s.version == fact.version]
    stated = (saying.valid.get("valid_from"), saying.valid.get("valid_to"))
    if not made or (made[-1].valid_from, made[-1].valid_to) != stated:
        return None
    for stream, expected in saying.expected.items():
        if (current := tx.stream_version(stream)) != expected:
            raise VersionConflict(stream, expected, current)
    p = saying.provenance
    who = (tx.actor.agent, p.source, p.extraction_method)
    if who in {s.who for s in supports}:
        cited = {o for s in supports for o in s.observations}
        if set(p.observations or ()) <= cited:
            raise _Quiet(made[-1].version, made[-1].seq)
        return None
    best: dict[str, float] = {}
    for source, confidence in [
        *((s.source, s.confidence) for s in supports),
        (p.source, p.confidence),
    ]:
        best[source] = max(best.get(source, 0.0), confidence)
    combined = corroborated(by.formula, list(best.values()))
    return Heard(made[-1].version, made[-1].seq, combined, list(best))


class _Quiet(Exception):
    def __init__(self, version: int, seq: int) -> None:
        self.version = version
        self.seq = seq


def _said_again(
    by: Hearer,
    tx: Transaction,
    fact: NodeRow | EdgeRow,
    identity: str,
    saying: Saying,
    unchanged: Callable[[int, int], WriteNodeResult | WriteRelationshipResult],
    corroboration: Callable[[Heard], NodeCorroborated | RelationshipCorroborated],
) -> bool:
    """Whether the write said the fact's current version again: then it is corroborated
    (one event) or ``Unchanged`` raised, answered by ``unchanged(version, seq)``; False: a
    write as ever."""
    try:
        heard = _heard(by, tx, fact, identity, saying)
    except _Quiet as quiet:
        raise Unchanged(unchanged(quiet.version, quiet.seq)) from None
    if heard is None:
        return False
    payload = corroboration(heard)
    tx.emit(draft(payload, [payload.stream], provenance=saying.provenance, request=saying.request))
    return True


def node(
    by: Hearer,
    tx: Transaction,
    fact: NodeRow,
    target: NodeRef,
    saying: Saying,
    scope: str | None,
    resolved_from: str | None,
) -> bool:
    """``_said_again`` of a node."""
    p = saying.provenance
    return _said_again(
        by,
        tx,
        fact,
        target.identity,
        saying,
        lambda version, seq: WriteNodeResult(
            status="unchanged",
            label=target.label,
            merge_keys=target.keys,
            confidence=p.confidence,
            write_gate_version=p.write_gate_version,
            remapped_from=target.remapped_from,
            created=False,
            version=version,
            schema_version=p.schema_version,
            seq=seq,
            event_id="",
            resolved_from=resolved_from,
        ),
        lambda heard: NodeCorroborated(
            node=target,
            version=heard.version,
            written_seq=heard.written_seq,
            corroborated_confidence=heard.confidence,
            sources=heard.sources,
            scope=scope,
            resolved_from=resolved_from,
            batch_item=saying.item,
        ),
    )


def relationship(
    by: Hearer,
    tx: Transaction,
    fact: EdgeRow,
    saying: Saying,
    scopes: dict[str, str] | None,
    resolved_from: dict[str, str] | None,
) -> bool:
    """``_said_again`` of a relationship (one whose ends both exist)."""
    p = saying.provenance
    return _said_again(
        by,
        tx,
        fact,
        fact.identity,
        saying,
        lambda version, seq: WriteRelationshipResult(
            status="unchanged",
            type=fact.type,
            from_node=_ref(fact.from_identity),
            to_node=_ref(fact.to_identity),
            confidence=p.confidence,
            write_gate_version=p.write_gate_version,
            remapped_from=fact.remapped_from,
            stubs_created=[],
            created=False,
            version=version,
            schema_version=p.schema_version,
            seq=seq,
            event_id="",
            resolved_from=resolved_from,
        ),
        lambda heard: RelationshipCorroborated(
            identity=fact.identity,
            type=fact.type,
            from_identity=fact.from_identity,
            to_identity=fact.to_identity,
            version=heard.version,
            written_seq=heard.written_seq,
            corroborated_confidence=heard.confidence,
            sources=heard.sources,
            scopes=scopes,
            resolved_from=resolved_from,
            batch_item=saying.item,
        ),
    )


def _ref(identity: str) -> ResultRef:
    label, keys = parse_node_identity(identity)
    return ResultRef(label=label, merge_keys=keys)


SINGLE = -1  # the key of an operation outside a batch, among ``quietly``'s


def quietly(emit: Emitter, unchanged: dict[int, Unchanged]) -> Emitter:
    """``emit``, with a write that changes nothing kept in ``unchanged`` by its batch item
    (``SINGLE`` outside a batch) instead of raised: it appends nothing, and the rest of
    the transaction goes on."""

    def run(tx: Transaction, item: int | None) -> None:
        try:
            emit(tx, item)
        except Unchanged as said:
            unchanged[SINGLE if item is None else item] = said

    return run


def answered(log: Log, said: Unchanged) -> ItemResult:
    """The unchanged answer, naming the event that wrote the version (read once the
    transaction is over)."""
    found = log.read(after_seq=said.result.seq - 1, limit=1).events
    return said.result.model_copy(update={"event_id": found[0].event_id if found else ""})


def answers(log: Log, unchanged: Mapping[int, Unchanged]) -> dict[int, ItemResult]:
    return {item: answered(log, said) for item, said in unchanged.items()}
