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
* a deletion ``prov:wasInvalidatedBy`` the deleting activity, at its time;
* the review lane shows only what reviewers let into the graph: a held write and a rejection
  add nothing; an approval is an activity of the reviewer with ``writegate:proposal``, which
  the approved write's activity ``prov:wasInformedBy``.

PROV is append-only by nature (a deletion adds an invalidation), so the projection appends
N-Triples to ``<path>``: cheap per batch however long the history. The lines are written as
text (``projections.prov_triples``), not through rdflib. ``<path>.declared`` lists the shared
resources (agents, gates, sources) already typed and labelled in the file, so opening reads
that short list rather than the whole file. ``<path>.checkpoint.json`` records the
checkpoint and both files' lengths at it; on opening, anything past them — a half-written
batch — is cut off, so the checkpoint and the files always agree. Turtle and JSON-LD are
serializations of the whole graph, made on demand by ``export`` (rdflib's serializers
rewrite everything, so they are not re-run per batch).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel
from rdflib import Graph, Namespace, URIRef
from rdflib.namespace import PROV

from writegate.eventlog import EventCore
from writegate.projections.contract import check_batch
from writegate.projections.files import write_atomically
from writegate.projections.prov_triples import BASE, WG_NS, Declare, Lines

WG = Namespace(WG_NS)
Format = Literal["nt", "turtle", "json-ld"]
FORMATS: tuple[Format, ...] = ("nt", "turtle", "json-ld")
# a shared resource's typing, as files written before ``<path>.declared`` existed hold it
_DECLARED = re.compile(
    r"^(<urn:writegate:(?:agent|gate|source)/[^>]*>) "
    r"<http://www\.w3\.org/1999/02/22-rdf-syntax-ns#type> "
)


def iri(kind: str, name: str) -> URIRef:
    return URIRef(f"{BASE}{kind}/{quote(name, safe='')}")


def version_iri(entity: URIRef, version: int) -> URIRef:
    return URIRef(f"{entity}/v{version}")


def node_iri(identity: str) -> URIRef:
    return iri("node", identity)


def relationship_iri(identity: str) -> URIRef:
    return iri("relationship", identity)


class _Meta(BaseModel):
    """``<path>.checkpoint.json``, read once on opening."""

    checkpoint: int
    offset: int  # the triples' length at the checkpoint
    declared: int | None = None  # the declared list's (None: from before the list was kept)
    approval: str | None = None
    """The approval activity whose write the last batch did not reach (rare: a batch that
    ends inside the approval's append)."""


class ProvProjector:
    def __init__(self, path: str | Path, name: str = "prov") -> None:
        self.name = name
        self.path = Path(path)
        self.triples_path = self.path
        self.declared_path = self.path.with_name(self.path.name + ".declared")
        self.meta_path = self.path.with_name(self.path.name + ".checkpoint.json")
        meta = self._read_meta()
        self._checkpoint, offset, declared = meta.checkpoint, meta.offset, meta.declared
        self._approval = meta.approval
        self.triples_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.triples_path, "ab") as handle:
            handle.truncate(offset)  # drop what a crash left past the checkpoint
        self._staging = False
        if declared is None:  # a file from before the list was kept: read it once
            self._declared = self._scan_declarations()
            write_atomically(self.declared_path, [_listed(sorted(self._declared))])
            self._write_meta(self._checkpoint, offset)
        else:
            self._declared = self._read_declared(declared)

    # -- the contract ----------------------------------------------------------------

    def checkpoint(self) -> int:
        return self._checkpoint

    def apply(self, events: Sequence[EventCore]) -> int:
        check_batch(self.name, self._checkpoint, events)
        fresh = [e for e in events if e.seq > self._checkpoint]  # appended once, never again
        if not fresh:
            return self._checkpoint
        lines: list[str] = []
        new: list[str] = []  # shared resources this batch types and labels
        declare = self._declare_into(new)
        approval = self._approval  # a reviewer's approval whose write is still to come
        for event in fresh:
            approval = Lines(lines, event, declare, approval).informed_by
        with open(self.triples_path, "ab") as handle:
            handle.write("".join(lines).encode())
            handle.flush()
            if not self._staging:  # a staged file is synced once, before the swap
                os.fsync(handle.fileno())
            offset = handle.tell()
        if new and not self._staging:  # while staged, the list is written whole at the swap
            with open(self.declared_path, "ab") as handle:
                handle.write(_listed(new))
                handle.flush()
                os.fsync(handle.fileno())
        self._approval = approval
        self._commit(fresh[-1].seq, offset)
        return self._checkpoint

    def _declare_into(self, new: list[str]) -> Declare:
        """True the first time the file meets ``subject``, which is then listed in ``new``."""
        declared = self._declared

        def declare(subject: str) -> bool:
            if subject in declared:
                return False
            declared.add(subject)
            new.append(subject)
            return True

        return declare

    def reset(self) -> None:
        with open(self.triples_path, "wb"):
            pass
        self._declared = set()
        self._approval = None
        if not self._staging:
            with open(self.declared_path, "wb"):
                pass
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
            meta = self._read_meta()
            self._checkpoint, self._approval = meta.checkpoint, meta.approval
            self._declared = self._read_declared(meta.declared or 0)
            raise
        finally:
            self._staging = False
        with open(self.triples_path, "rb+") as built:
            os.fsync(built.fileno())
        write_atomically(self.declared_path, [_listed(sorted(self._declared))])
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

    def _read_meta(self) -> _Meta:
        try:
            return _Meta.model_validate_json(self.meta_path.read_bytes())
        except FileNotFoundError:
            return _Meta(checkpoint=0, offset=0, declared=0)

    def _write_meta(self, checkpoint: int, offset: int) -> None:
        declared = self.declared_path.stat().st_size if self.declared_path.exists() else 0
        meta = _Meta(
            checkpoint=checkpoint, offset=offset, declared=declared, approval=self._approval
        )
        write_atomically(self.meta_path, [meta.model_dump_json(exclude_none=True).encode()])
        self._checkpoint = checkpoint

    def _read_declared(self, length: int) -> set[str]:
        with open(self.declared_path, "ab+") as handle:
            handle.truncate(length)  # drop what a crash left past the checkpoint
            handle.seek(0)
            return set(handle.read().decode().splitlines())

    def _scan_declarations(self) -> set[str]:
        declared: set[str] = set()
        with open(self.triples_path, encoding="utf-8") as handle:
            for line in handle:
                if match := _DECLARED.match(line):
                    declared.add(match.group(1))
        return declared


def _listed(subjects: Sequence[str]) -> bytes:
    return "".join(f"{subject}\n" for subject in subjects).encode()


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
