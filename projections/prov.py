"""The log as W3C PROV-O: who generated which version of which node, from what, when.

Mapping (instances under ``urn:writegate:``, extra terms in the ``writegate:`` namespace
``https://writegate.dev/ns#``):

* every accepted write is a ``prov:Activity`` (``activity/<event_id>``) with its time,
  ``writegate:seq`` and ``writegate:eventType``;
* the agent is a ``prov:Agent`` (``agent/<id>``) the activity ``prov:wasAssociatedWith``;
  the gate, with its version, is a ``prov:SoftwareAgent`` (``gate/<version>``) too;
* the declared ``source`` is a ``prov:Entity`` (``source/<source>``) the activity ``prov:used``;
* each node or relationship is a ``prov:Entity`` (``node/<identity>``, ``relationship/…``);
  each version of it is a ``prov:Entity`` (``…/v<n>``) that is ``prov:specializationOf`` it,
  ``prov:wasGeneratedBy`` the activity, ``prov:wasAttributedTo`` the agent and
  ``prov:wasDerivedFrom`` (and ``prov:wasRevisionOf``) the previous version, carrying
  ``writegate:confidence``, ``writegate:extractionMethod``, ``writegate:reliability``,
  ``writegate:schemaVersion``, ``writegate:label``/``writegate:type``,
  ``writegate:remappedFrom`` and ``writegate:changes`` (the property delta, as JSON);
* a deletion ``prov:wasInvalidatedBy`` the deleting activity, at its time.

PROV is append-only by nature (a deletion adds an invalidation), so the projection appends
N-Triples to ``<path>``: cheap per batch however long the history. ``<path>.checkpoint.json``
records the checkpoint and the file length at it; on opening, anything past that length —
a half-written batch — is cut off, so the checkpoint and the file always agree. Turtle and
JSON-LD are serializations of the whole graph, made on demand by ``export`` (rdflib's
serializers rewrite everything, so they are not re-run per batch).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import orjson
from rdflib import RDF, RDFS, XSD, Graph, Namespace, URIRef
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
from writegate.projections.contract import check_batch
from writegate.projections.files import write_atomically

WG = Namespace("https://writegate.dev/ns#")
BASE = "urn:writegate:"
Format = Literal["nt", "turtle", "json-ld"]
FORMATS: tuple[Format, ...] = ("nt", "turtle", "json-ld")
_DECLARED = re.compile(r"^(<[^>]+>) <http://www\.w3\.org/1999/02/22-rdf-syntax-ns#type> ")
Triple = tuple[Node, Node, Node]


def iri(kind: str, name: str) -> URIRef:
    return URIRef(f"{BASE}{kind}/{quote(name, safe='')}")


def version_iri(entity: URIRef, version: int) -> URIRef:
    return URIRef(f"{entity}/v{version}")


def node_iri(identity: str) -> URIRef:
    return iri("node", identity)


def relationship_iri(identity: str) -> URIRef:
    return iri("relationship", identity)


class ProvProjector:
    def __init__(self, path: str | Path, name: str = "prov") -> None:
        self.name = name
        self.path = Path(path)
        self.triples_path = self.path
        self.meta_path = self.path.with_name(self.path.name + ".checkpoint.json")
        self._checkpoint, offset = self._read_meta()
        self.triples_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.triples_path, "ab") as handle:
            handle.truncate(offset)  # drop what a crash left past the checkpoint
        self._declared = self._scan_declarations()
        self._staging = False

    # -- the contract ----------------------------------------------------------------

    def checkpoint(self) -> int:
        return self._checkpoint

    def apply(self, events: Sequence[EventCore]) -> int:
        check_batch(self.name, self._checkpoint, events)
        fresh = [e for e in events if e.seq > self._checkpoint]  # appended once, never again
        if not fresh:
            return self._checkpoint
        lines = [
            f"{s.n3()} {p.n3()} {o.n3()} .\n".encode()
            for event in fresh
            for s, p, o in self._triples(event)
        ]
        with open(self.triples_path, "ab") as handle:
            handle.writelines(lines)
            handle.flush()
            os.fsync(handle.fileno())
            offset = handle.tell()
        self._commit(fresh[-1].seq, offset)
        return self._checkpoint

    def reset(self) -> None:
        with open(self.triples_path, "wb"):
            pass
        self._declared = set()
        self._commit(0, 0)

    def _commit(self, checkpoint: int, offset: int) -> None:
        if self._staging:
            self._checkpoint = checkpoint  # made durable when the staged file is swapped in
            return
        self._write_meta(checkpoint, offset)

    @contextmanager
    def staged(self) -> Iterator[None]:
        """Build into a side file and swap it in at the end (a rebuild): readers keep the
        old file until the new one is complete; a crash leaves the old one and its
        checkpoint untouched."""
        final = self.triples_path
        self.triples_path = final.with_name(f".{final.name}.staged")
        self.triples_path.write_bytes(b"")
        self._staging = True
        try:
            yield
        except BaseException:
            self.triples_path.unlink(missing_ok=True)
            self.triples_path = final
            self._checkpoint, _ = self._read_meta()
            self._declared = self._scan_declarations()
            raise
        finally:
            self._staging = False
        staged_file, self.triples_path = self.triples_path, final
        os.replace(staged_file, final)
        self._commit(self._checkpoint, final.stat().st_size)

    def snapshot(self) -> Any:
        return self.triples_path.read_bytes()

    def close(self) -> None:
        return None

    def graph(self) -> Graph:
        """The whole provenance graph, parsed (for queries and other serializations)."""
        return load_graph(self.triples_path)

    # -- files -------------------------------------------------------------------------

    def _read_meta(self) -> tuple[int, int]:
        try:
            meta = json.loads(self.meta_path.read_text())
            return int(meta["checkpoint"]), int(meta["offset"])
        except FileNotFoundError:
            return 0, 0

    def _write_meta(self, checkpoint: int, offset: int) -> None:
        body = json.dumps({"checkpoint": checkpoint, "offset": offset}).encode()
        write_atomically(self.meta_path, [body])
        self._checkpoint = checkpoint

    def _scan_declarations(self) -> set[str]:
        declared: set[str] = set()
        with open(self.triples_path, encoding="utf-8") as handle:
            for line in handle:
                if match := _DECLARED.match(line):
                    declared.add(match.group(1)[1:-1])
        return declared

    # -- the mapping -----------------------------------------------------------------

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


def load_graph(path: Path) -> Graph:
    graph = Graph()
    graph.bind("prov", PROV)
    graph.bind("writegate", WG)
    graph.parse(path, format="nt")
    return graph


def export(path: str | Path, fmt: Format) -> bytes:
    """The PROV projection at ``path`` serialized as Turtle, JSON-LD or N-Triples."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
    if fmt == "nt":
        return Path(path).read_bytes()
    return load_graph(Path(path)).serialize(format=fmt).encode()


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _literal(value: Any) -> RDFLiteral:
    if isinstance(value, float):
        return RDFLiteral(value, datatype=XSD.double)
    return RDFLiteral(value)
