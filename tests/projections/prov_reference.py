"""PROV-O lines as writegate wrote them before it wrote text: rdflib terms and ``n3()``.
Kept as the reference the projection's lines are compared with (``test_prov``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from rdflib import RDF, RDFS, XSD, Namespace, URIRef
from rdflib import Literal as RDFLiteral
from rdflib.namespace import PROV
from rdflib.term import Node

from writegate.eventlog import EventCore
from writegate.eventlog.events import format_timestamp
from writegate.language import (
    NodeDeleted,
    NodeWritten,
    RelationshipDeleted,
    RelationshipWritten,
    SchemaPublished,
    payload_of,
    provenance_of,
)
from writegate.projections.prov import iri, node_iri, relationship_iri, version_iri

WG = Namespace("https://writegate.dev/ns#")
Triple = tuple[Node, Node, Node]


def lines(events: Iterable[EventCore]) -> bytes:
    """The N-Triples the rdflib mapping wrote for ``events``, from an empty file."""
    mapping = Mapping()
    return b"".join(
        f"{s.n3()} {p.n3()} {o.n3()} .\n".encode()
        for event in events
        for s, p, o in mapping._triples(event)
    )


class Mapping:
    def __init__(self) -> None:
        self._declared: set[str] = set()

    def _declare(self, subject: URIRef, kind: URIRef, label: str) -> Iterator[Triple]:
        """Type and label a shared resource (agent, gate, source) once per file."""
        if str(subject) not in self._declared:
            self._declared.add(str(subject))
            yield subject, RDF.type, kind
            yield subject, RDFS.label, RDFLiteral(label)

    def _triples(self, event: EventCore) -> Iterator[Triple]:
        at = RDFLiteral(format_timestamp(event.occurred_at), datatype=XSD.dateTime)
        activity = iri("activity", event.event_id)
        agent = iri("agent", event.actor.agent)
        yield activity, RDF.type, PROV.Activity
        yield activity, PROV.startedAtTime, at
        yield activity, PROV.endedAtTime, at
        yield activity, WG.seq, RDFLiteral(event.seq)
        yield activity, WG.eventType, RDFLiteral(event.type)
        yield from self._declare(agent, PROV.Agent, event.actor.agent)
        yield activity, PROV.wasAssociatedWith, agent
        if event.actor.session:
            yield activity, WG.session, RDFLiteral(event.actor.session)
        provenance = provenance_of(event)
        if provenance is not None:
            gate = iri("gate", provenance.write_gate_version)
            label = f"writegate {provenance.write_gate_version}"
            yield from self._declare(gate, PROV.SoftwareAgent, label)
            yield activity, PROV.wasAssociatedWith, gate
            used = iri("source", provenance.source)
            yield from self._declare(used, PROV.Entity, provenance.source)
            yield activity, PROV.used, used

        made = (activity, agent, at)
        match payload_of(event):
            case NodeWritten(node=node, properties=properties):
                yield from self._version(
                    event,
                    node_iri(node.identity),
                    node.stream,
                    made,
                    {
                        WG.label: node.label,
                        WG.remappedFrom: node.remapped_from,
                        WG.changes: _json(properties),
                    },
                )
            case RelationshipWritten() as written:
                for stub in written.stubs_created:
                    stub_extra = {WG.label: stub.label, WG.stub: True}
                    yield from self._version(
                        event, node_iri(stub.identity), stub.stream, made, stub_extra
                    )
                yield from self._version(
                    event,
                    relationship_iri(written.identity),
                    written.stream,
                    made,
                    {
                        WG.type: written.type,
                        WG.remappedFrom: written.remapped_from,
                        WG.changes: _json(written.properties),
                        WG["from"]: node_iri(written.from_node.identity),
                        WG.to: node_iri(written.to_node.identity),
                    },
                )
            case NodeDeleted(node=node):
                yield from self._invalidate(node_iri(node.identity), node.stream, event, made)
            case RelationshipDeleted() as deleted:
                rel = relationship_iri(deleted.identity)
                yield from self._invalidate(rel, deleted.stream, event, made)
            case SchemaPublished(version=version):
                schema = iri("schema", version)
                yield schema, RDF.type, PROV.Entity
                yield schema, PROV.wasGeneratedBy, activity
                yield schema, PROV.wasAttributedTo, agent
            case _:
                pass

    def _version(
        self,
        event: EventCore,
        entity: URIRef,
        stream: str,
        made: tuple[URIRef, URIRef, RDFLiteral],
        extra: dict[URIRef, Any],
    ) -> Iterator[Triple]:
        activity, agent, at = made
        number = event.streams[stream]
        version = version_iri(entity, number)
        provenance = provenance_of(event)
        yield entity, RDF.type, PROV.Entity
        yield version, RDF.type, PROV.Entity
        yield version, PROV.specializationOf, entity
        yield version, PROV.wasGeneratedBy, activity
        yield version, PROV.generatedAtTime, at
        yield version, PROV.wasAttributedTo, agent
        yield version, WG.version, RDFLiteral(number)
        if number > 1:
            previous = version_iri(entity, number - 1)
            yield version, PROV.wasDerivedFrom, previous
            yield version, PROV.wasRevisionOf, previous
        if provenance is not None:
            for predicate, value in (
                (WG.confidence, provenance.confidence),
                (WG.reliability, provenance.reliability),
                (WG.extractionMethod, provenance.extraction_method),
                (WG.schemaVersion, provenance.schema_version),
                (WG.formula, provenance.formula),
            ):
                yield version, predicate, _literal(value)
        for predicate, value in extra.items():
            if value is not None:
                yield version, predicate, value if isinstance(value, URIRef) else _literal(value)

    def _invalidate(
        self, entity: URIRef, stream: str, event: EventCore, made: tuple[URIRef, URIRef, RDFLiteral]
    ) -> Iterator[Triple]:
        activity, _, at = made
        last = version_iri(entity, event.streams[stream] - 1)
        yield last, PROV.wasInvalidatedBy, activity
        yield last, PROV.invalidatedAtTime, at


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _literal(value: Any) -> RDFLiteral:
    if isinstance(value, float):
        return RDFLiteral(value, datatype=XSD.double)
    return RDFLiteral(value)
