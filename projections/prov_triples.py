"""One event as PROV-O N-Triples lines: the mapping ``projections.prov`` describes.

Written as text (``projections.ntriples``) rather than as rdflib terms: the terms and their
``n3()`` cost three quarters of a rebuild. The IRIs that recur (predicates, classes, agents,
gates, sources, the nodes relationships point at) are spelled once and reused.
``tests/projections/test_prov.py`` checks the lines against the rdflib mapping they replace.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson

from writegate.eventlog import EventCore
from writegate.eventlog.events import parse_timestamp
from writegate.language import (
    NodeCorroborated,
    NodeDeleted,
    NodeWritten,
    ObservationRecorded,
    Payload,
    ProposalDecided,
    RelationshipCorroborated,
    RelationshipDeleted,
    RelationshipWritten,
    RetractedFact,
    SchemaPublished,
    SourceRetracted,
    SourceUnretracted,
    WriteProposed,
    WriteProvenance,
    node_stream,
    payload_of,
    provenance_of,
    relationship_stream,
)
from writegate.language.observations import document_of, passage_of
from writegate.projections import ntriples as nt

BASE = "urn:writegate:"
WG_NS = "https://writegate.dev/ns#"

TYPE, LABEL = f"<{nt.RDF}type>", f"<{nt.RDFS}label>"
ACTIVITY, AGENT, SOFTWARE_AGENT, ENTITY = (
    f"<{nt.PROV}{name}>" for name in ("Activity", "Agent", "SoftwareAgent", "Entity")
)
STARTED, ENDED, ASSOCIATED, USED = (
    f"<{nt.PROV}{name}>" for name in ("startedAtTime", "endedAtTime", "wasAssociatedWith", "used")
)
SPECIALIZATION, GENERATED_BY, GENERATED_AT, ATTRIBUTED, DERIVED, REVISION = (
    f"<{nt.PROV}{name}>"
    for name in (
        "specializationOf",
        "wasGeneratedBy",
        "generatedAtTime",
        "wasAttributedTo",
        "wasDerivedFrom",
        "wasRevisionOf",
    )
)
INVALIDATED_BY, INVALIDATED_AT, INFORMED_BY = (
    f"<{nt.PROV}{name}>" for name in ("wasInvalidatedBy", "invalidatedAtTime", "wasInformedBy")
)
SEQ, EVENT_TYPE, SESSION, VERSION, STUB, FROM, TO = (
    f"<{WG_NS}{name}>" for name in ("seq", "eventType", "session", "version", "stub", "from", "to")
)
LABEL_OF, TYPE_OF, REMAPPED_FROM, CHANGES, PROPOSAL = (
    f"<{WG_NS}{name}>" for name in ("label", "type", "remappedFrom", "changes", "proposal")
)
VALUE, PRIMARY_SOURCE, QUOTED = (
    f"<{nt.PROV}{name}>" for name in ("value", "hadPrimarySource", "wasQuotedFrom")
)
SAID_AT, OBSERVATION_SESSION = (f"<{WG_NS}{name}>" for name in ("saidAt", "observationSession"))
CORROBORATED_BY, CORROBORATED_CONFIDENCE = (
    f"<{WG_NS}{name}>" for name in ("corroboratedBy", "corroboratedConfidence")
)
CITED = tuple(
    f"<{WG_NS}{name}>"
    for name in ("confidence", "reliability", "extractionMethod", "schemaVersion", "formula")
)

_Heard = NodeCorroborated | RelationshipCorroborated
Declare = Callable[[str], bool]  # True the first time a shared resource's IRI is seen


@lru_cache(maxsize=1 << 12)
def shared(kind: str, value: str) -> str:
    """An agent's, gate's, source's or schema's IRI (few, and met again and again)."""
    return nt.name(BASE, kind, value)


@lru_cache(maxsize=1 << 16)
def entity(kind: str, identity: str) -> str:
    """A node's or relationship's IRI, without the brackets (versions extend it)."""
    return nt.name(BASE, kind, identity)[1:-1]


def _cited(provenance: WriteProvenance) -> tuple[str, ...]:
    """The provenance literals every version carries, in ``CITED`` order."""
    values = (
        provenance.confidence,
        provenance.reliability,
        provenance.extraction_method,
        provenance.schema_version,
        provenance.formula,
    )
    return _literals(values, tuple(map(type, values)))


@lru_cache(maxsize=1 << 10)  # writes from one source and method mostly share all five
def _literals(values: tuple[Any, ...], _types: tuple[type, ...]) -> tuple[str, ...]:
    """(The types are part of the key: ``1``, ``1.0`` and ``True`` are equal keys.)"""
    return tuple(nt.literal(value) for value in values)


def _json(value: dict[str, Any]) -> str:
    """A property change as the literal shows it: canonical JSON."""
    return nt.string(orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode())


class Lines:
    """The lines of one event, appended to ``out``. ``declare`` says whether a shared
    resource (agent, gate, source) still needs its type and label in this file.

    The review lane is not the graph's history until a reviewer approves: a held write
    (``write.proposed``) and a rejection have no lines. An approval is an activity of the
    reviewer naming the proposal, and the write it applies (the next events, up to the
    node or relationship written) ``prov:wasInformedBy`` it: ``informed_by`` carries that
    activity from one event to the next, and out (a batch may end between them)."""

    __slots__ = ("activity", "agent", "at", "cited", "derived", "event", "informed_by", "out")

    def __init__(
        self, out: list[str], event: EventCore, declare: Declare, informed_by: str | None = None
    ) -> None:
        self.out, self.event, self.informed_by = out, event, informed_by
        payload = payload_of(event)
        match payload:
            case WriteProposed() | ProposalDecided(decision="rejected"):
                return
            case ProposalDecided(reviewer=reviewer):
                self.informed_by = self._header(shared("agent", reviewer), reviewer, declare)
                out.append(f"{self.informed_by} {PROPOSAL} {nt.string(payload.proposal)} .\n")
                return
            case _:
                pass
        activity = self._header(shared("agent", event.actor.agent), event.actor.agent, declare)
        if informed_by is not None:
            out.append(f"{activity} {INFORMED_BY} {informed_by} .\n")
            if isinstance(payload, NodeWritten | RelationshipWritten | _Heard):
                self.informed_by = None  # the approved write, applied
        if event.actor.session:
            out.append(f"{activity} {SESSION} {nt.string(event.actor.session)} .\n")
        provenance = provenance_of(event)
        self.cited: tuple[str, ...] = ()
        self.derived: tuple[str, ...] = ()  # the observations the write cited, as IRIs
        if provenance is not None:
            self.cited = _cited(provenance)
            cited = provenance.observations or ()
            self.derived = tuple(shared("observation", o) for o in cited)
            for passage in (o for o in cited if passage_of(o) is not None):
                quoted = shared("observation", passage)  # a part of its document, quoted
                out += (
                    f"{quoted} {TYPE} {ENTITY} .\n",
                    f"{quoted} {QUOTED} {shared('observation', document_of(passage))} .\n",
                )
            version = provenance.write_gate_version
            gate = shared("gate", version)
            if declare(gate):
                out += (
                    f"{gate} {TYPE} {SOFTWARE_AGENT} .\n",
                    f"{gate} {LABEL} {nt.string(f'writegate {version}')} .\n",
                )
            out.append(f"{activity} {ASSOCIATED} {gate} .\n")
            used = shared("source", provenance.source)
            if declare(used):
                out += (
                    f"{used} {TYPE} {ENTITY} .\n",
                    f"{used} {LABEL} {nt.string(provenance.source)} .\n",
                )
            out.append(f"{activity} {USED} {used} .\n")
        self._payload(payload)

    def _header(self, agent: str, agent_name: str, declare: Declare) -> str:
        """The activity's own lines, associated with ``agent``; returns its IRI."""
        out, event = self.out, self.event
        at = self.at = nt.date_time(event.occurred_at)
        activity = self.activity = nt.name(BASE, "activity", event.event_id)
        self.agent = agent
        out += (
            f"{activity} {TYPE} {ACTIVITY} .\n",
            f"{activity} {STARTED} {at} .\n",
            f"{activity} {ENDED} {at} .\n",
            f"{activity} {SEQ} {nt.integer(event.seq)} .\n",
            f"{activity} {EVENT_TYPE} {nt.string(event.type)} .\n",
        )
        if declare(agent):
            out += (
                f"{agent} {TYPE} {AGENT} .\n",
                f"{agent} {LABEL} {nt.string(agent_name)} .\n",
            )
        out.append(f"{activity} {ASSOCIATED} {agent} .\n")
        return activity

    def _payload(self, payload: Payload) -> None:
        match payload:
            case NodeWritten(node=node, properties=properties):
                self._version(
                    entity("node", node.identity),
                    node.stream,
                    (
                        (LABEL_OF, nt.string(node.label)),
                        (REMAPPED_FROM, _optional(node.remapped_from)),
                        (CHANGES, _json(properties)),
                    ),
                )
            case RelationshipWritten() as written:
                for stub in written.stubs_created:
                    self._version(
                        entity("node", stub.identity),
                        stub.stream,
                        ((LABEL_OF, nt.string(stub.label)), (STUB, nt.TRUE)),
                    )
                self._version(
                    entity("relationship", written.identity),
                    written.stream,
                    (
                        (TYPE_OF, nt.string(written.type)),
                        (REMAPPED_FROM, _optional(written.remapped_from)),
                        (CHANGES, _json(written.properties)),
                        (FROM, f"<{entity('node', written.from_node.identity)}>"),
                        (TO, f"<{entity('node', written.to_node.identity)}>"),
                    ),
                )
            case NodeCorroborated() as heard:
                self._corroborated(entity("node", heard.node.identity), heard)
            case RelationshipCorroborated() as heard:
                self._corroborated(entity("relationship", heard.identity), heard)
            case NodeDeleted(node=node):
                self._invalidate(entity("node", node.identity), node.stream)
            case RelationshipDeleted() as deleted:
                self._invalidate(entity("relationship", deleted.identity), deleted.stream)
            case SourceRetracted() | SourceUnretracted() as retraction:
                for fact in retraction.facts:
                    self._retracted(fact)
            case ObservationRecorded() as observed:
                self._observation(observed)
            case SchemaPublished(version=version):
                schema = shared("schema", version)
                self.out += (
                    f"{schema} {TYPE} {ENTITY} .\n",
                    f"{schema} {GENERATED_BY} {self.activity} .\n",
                    f"{schema} {ATTRIBUTED} {self.agent} .\n",
                )
            case _:
                pass

    def _version(self, iri: str, stream: str, extra: tuple[tuple[str, str | None], ...]) -> None:
        number = self.event.streams[stream]
        version = f"<{iri}/v{number}>"
        out = self.out
        out += (
            f"<{iri}> {TYPE} {ENTITY} .\n",
            f"{version} {TYPE} {ENTITY} .\n",
            f"{version} {SPECIALIZATION} <{iri}> .\n",
            f"{version} {GENERATED_BY} {self.activity} .\n",
            f"{version} {GENERATED_AT} {self.at} .\n",
            f"{version} {ATTRIBUTED} {self.agent} .\n",
            f"{version} {VERSION} {nt.integer(number)} .\n",
        )
        if number > 1:
            previous = f"<{iri}/v{number - 1}>"
            out += (
                f"{version} {DERIVED} {previous} .\n",
                f"{version} {REVISION} {previous} .\n",
            )
        for predicate, value in zip(CITED, self.cited, strict=False):
            out.append(f"{version} {predicate} {value} .\n")
        for observation in self.derived:
            out.append(f"{version} {DERIVED} {observation} .\n")
        for predicate, term in extra:
            if term is not None:
                out.append(f"{version} {predicate} {term} .\n")

    def _observation(self, observed: ObservationRecorded) -> None:
        """An observation: an entity holding its text, from its source, said at its time.
        A forgotten observation's text reads as null: the entity stays, without its value."""
        kept = shared("observation", observed.observation)
        out = self.out
        out.append(f"{kept} {TYPE} {ENTITY} .\n")
        if observed.text is not None:  # (payloads are read unchecked: ``text`` may be null)
            out.append(f"{kept} {VALUE} {nt.string(observed.text)} .\n")
        out += (
            f"{kept} {GENERATED_BY} {self.activity} .\n",
            f"{kept} {GENERATED_AT} {self.at} .\n",
            f"{kept} {ATTRIBUTED} {self.agent} .\n",
            f"{kept} {SAID_AT} {nt.date_time(parse_timestamp(observed.said_at))} .\n"
            if observed.said_at
            else f"{kept} {SAID_AT} {self.at} .\n",
        )
        provenance = provenance_of(self.event)
        if provenance is not None:
            out.append(f"{kept} {PRIMARY_SOURCE} {shared('source', provenance.source)} .\n")
        if observed.session:
            out.append(f"{kept} {OBSERVATION_SESSION} {nt.string(observed.session)} .\n")
        for predicate, value in zip(CITED, self.cited, strict=False):
            out.append(f"{kept} {predicate} {value} .\n")

    def _corroborated(self, iri: str, heard: NodeCorroborated | RelationshipCorroborated) -> None:
        """A corroboration: the version it supports is attributed to its agent too, derived
        from its source (and the observations it cited), and names the corroborating
        activity, which carries the write's provenance and the confidence it brought."""
        version, activity = f"<{iri}/v{heard.version}>", self.activity
        out = self.out
        out += (
            f"{version} {ATTRIBUTED} {self.agent} .\n",
            f"{version} {CORROBORATED_BY} {activity} .\n",
            f"{activity} {CORROBORATED_CONFIDENCE} {nt.literal(heard.corroborated_confidence)} .\n",
        )
        provenance = provenance_of(self.event)
        if provenance is not None:
            out.append(f"{version} {DERIVED} {shared('source', provenance.source)} .\n")
        for predicate, value in zip(CITED, self.cited, strict=False):
            out.append(f"{activity} {predicate} {value} .\n")
        for observation in self.derived:
            out.append(f"{version} {DERIVED} {observation} .\n")

    def _retracted(self, fact: RetractedFact) -> None:
        """A fact a retraction took its support from: a kept one stays as it is (its
        version is still said, by the supports left); one reverted or retracted has its
        version ``prov:wasInvalidatedBy`` the retraction, and a reverted one (or one put
        back) a new version, generated by it, saying what it holds again."""
        if fact.outcome == "kept":
            return
        kind = "node" if fact.kind == "node" else "relationship"
        iri = entity(kind, fact.identity)
        stream = (
            node_stream(fact.identity) if kind == "node" else relationship_stream(fact.identity)
        )
        if fact.before is not None:
            self._invalidate(iri, stream)
        image = fact.after
        if image is not None:
            named = (
                (LABEL_OF, nt.string(image.label or ""))
                if kind == "node"
                else (TYPE_OF, nt.string(image.type or ""))
            )
            stub = (STUB, nt.TRUE if image.stub else None)
            self._version(iri, stream, (named, stub, (CHANGES, _json(image.properties))))

    def _invalidate(self, iri: str, stream: str) -> None:
        last = f"<{iri}/v{self.event.streams[stream] - 1}>"
        self.out += (
            f"{last} {INVALIDATED_BY} {self.activity} .\n",
            f"{last} {INVALIDATED_AT} {self.at} .\n",
        )


def _optional(value: str | None) -> str | None:
    return None if value is None else nt.string(value)
