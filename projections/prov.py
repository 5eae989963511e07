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
checkpoint, both files' lengths at it and the log it follows (``LogMark``); on opening,
anything past them — a half-written batch — is cut off, so the checkpoint and the files
always agree. A file shorter than its checkpoint says (cut by hand, a copy, a disk) is
never extended: it is reported (``damage``) and refused until a rebuild writes it again
(the file is the store: there is nothing else to write it from). Turtle and JSON-LD are
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

from pydantic import BaseModel, ValidationError
from rdflib import Graph, Namespace, URIRef
from rdflib.namespace import PROV

from writegate.eventlog import EventCore, Log, one_line
from writegate.projections.contract import LogMark, ProjectionError, check_batch, mark_at
from writegate.projections.files import open_private, write_atomically, write_failed
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
    log: LogMark | None = None  # None: written before projections recorded their log


def read_meta(path: Path) -> _Meta:
    """The checkpoint record of the PROV file at ``path`` (an empty one if there is none)."""
    meta_path = path.with_name(path.name + ".checkpoint.json")
    try:
        return _Meta.model_validate_json(meta_path.read_bytes())
    except FileNotFoundError:
        return _Meta(checkpoint=0, offset=0, declared=0)
    except ValidationError as exc:
        raise ProjectionError(f"{meta_path} is not a checkpoint record: {one_line(exc)}") from exc


def damage_of(path: Path, meta: _Meta) -> str | None:
    """Why the triples at ``path`` do not reach the length their checkpoint records."""
    size = path.stat().st_size if path.exists() else 0
    if size >= meta.offset:
        return None
    return (
        f"{path} is {size:,} bytes but its checkpoint (seq {meta.checkpoint}) recorded "
        f"{meta.offset:,}: the file was cut short"
    )


class ProvProjector:
    """``log``: the log the events come from, whose mark is recorded with each checkpoint
    (without one, none is: a store of unknown provenance)."""

    def __init__(self, path: str | Path, name: str = "prov", log: Log | None = None) -> None:
        self.name = name
        self.log = log
        self.path = Path(path)
        self.triples_path = self.path
        self.declared_path = self.path.with_name(self.path.name + ".declared")
        self.meta_path = self.path.with_name(self.path.name + ".checkpoint.json")
        meta = self._read_meta()
        self._checkpoint, self._offset, declared = meta.checkpoint, meta.offset, meta.declared
        self._approval, self._mark = meta.approval, meta.log
        self.triples_path.parent.mkdir(parents=True, exist_ok=True)
        self._staging = False
        self._damage = damage_of(self.triples_path, meta)
        if self._damage is not None:  # never extended: refused until rebuilt
            self._declared: set[str] = set()
            return
        with open_private(self.triples_path) as handle:
            handle.truncate(self._offset)  # drop what a crash left past the checkpoint
        listed = self.declared_path.stat().st_size if self.declared_path.exists() else 0
        if declared is None or listed < declared:  # older, or cut short: read the file once
            self._declared = self._scan_declarations()
            write_atomically(self.declared_path, [_listed(sorted(self._declared))])
            self._write_meta(self._checkpoint, self._offset)
        else:
            self._declared = self._read_declared(declared)

    # -- the contract ----------------------------------------------------------------

    def checkpoint(self) -> int:
        return self._checkpoint

    def mark(self) -> LogMark | None:
        return self._mark

    def damage(self) -> str | None:
        return None if self._staging else self._damage

    def adopt(self) -> None:
        if self._damage is None:
            self._write_meta(self._checkpoint, self._offset)

    def apply(self, events: Sequence[EventCore]) -> int:
        if self._damage is not None and not self._staging:
            raise ProjectionError(f"{self.name}: {self._damage}; rebuild it from the log")
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
        previous = self._approval
        try:
            offset = self._append("".join(lines).encode(), new)
            self._approval = approval
            self._commit(fresh[-1].seq, offset)
        except OSError as exc:  # a full disk: back to the checkpoint, files and all
            self._declared.difference_update(new)
            self._approval = previous
            if not self._staging:
                self._cut_back()
            raise write_failed(self.name, self.triples_path, exc) from exc
        return self._checkpoint

    def _append(self, data: bytes, new: list[str]) -> int:
        """Append a batch's triples (and the resources it declared); the triples' length."""
        with open_private(self.triples_path) as handle:
            handle.write(data)
            handle.flush()
            if not self._staging:  # a staged file is synced once, before the swap
                os.fsync(handle.fileno())
            offset = handle.tell()
        if new and not self._staging:  # while staged, the list is written whole at the swap
            with open_private(self.declared_path) as handle:
                handle.write(_listed(new))
                handle.flush()
                os.fsync(handle.fileno())
        return offset

    def _cut_back(self) -> None:
        """The files as the checkpoint records them (after a batch the disk refused)."""
        meta = self._read_meta()
        with open(self.triples_path, "rb+") as handle:
            handle.truncate(meta.offset)
        if self.declared_path.exists():
            with open(self.declared_path, "rb+") as handle:
                handle.truncate(meta.declared or 0)

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
        with open_private(self.triples_path, "wb"):
            pass
        self._declared = set()
        self._approval = None
        if not self._staging:
            with open_private(self.declared_path, "wb"):
                pass
            self._damage = None
        self._commit(0, 0)

    def _commit(self, checkpoint: int, offset: int) -> None:
        if self._staging:
            self._checkpoint = checkpoint  # made durable when the staged file is swapped in
            self._note_staged(checkpoint, offset)
            return
        self._write_meta(checkpoint, offset)

    def _note_staged(self, checkpoint: int, offset: int) -> None:
        """How far the staged file got, beside it, so that a rebuild whose process dies can
        be resumed from there (renamed into place, not synced: a process dying is what it
        survives; the staged file is synced once, before the swap)."""
        progress = _Meta(checkpoint=checkpoint, offset=offset, approval=self._approval)
        tmp = self._staged_meta.with_name(self._staged_meta.name + ".tmp")
        with open_private(tmp, "wb") as handle:
            handle.write(progress.model_dump_json(exclude_none=True).encode())
        os.replace(tmp, self._staged_meta)

    @property
    def _staged_meta(self) -> Path:
        return self.path.with_name(f".{self.path.name}.staged.json")

    def _staged_progress(self, staged: Path) -> _Meta | None:
        """What a rebuild that died left in ``staged``, if it can be continued."""
        try:
            progress = _Meta.model_validate_json(self._staged_meta.read_bytes())
        except (FileNotFoundError, ValidationError):
            return None
        size = staged.stat().st_size if staged.exists() else -1
        return progress if progress.checkpoint > 0 and progress.offset <= size else None

    resumes_staging = True  # ``staged(resume=True)`` continues what a dead rebuild built

    @contextmanager
    def staged(self, *, resume: bool = False) -> Iterator[bool]:
        """Build into a side file and swap it in at the end (a rebuild): readers keep the
        old file until the new one is complete; a crash leaves the old one and its
        checkpoint untouched. ``resume``: continue the side file a rebuild that died left,
        from its last batch, if there is one; yields whether it did."""
        final = self.triples_path
        self.triples_path = final.with_name(f".{final.name}.staged")
        damage = self._damage
        progress = self._staged_progress(self.triples_path) if resume else None
        try:
            with open_private(self.triples_path, "wb" if progress is None else "ab") as handle:
                if progress is not None:
                    handle.truncate(progress.offset)  # past its last batch: half a batch
            if progress is not None:
                self._declared = self._scan_declarations()
                self._checkpoint, self._approval = progress.checkpoint, progress.approval
            self._staging = True
            try:
                yield progress is not None
                with open(self.triples_path, "rb+") as built:
                    os.fsync(built.fileno())
                write_atomically(self.declared_path, [_listed(sorted(self._declared))])
            finally:
                self._staging = False
            staged_file, self.triples_path = self.triples_path, final
            os.replace(staged_file, final)
            self._damage = None
            self._commit(self._checkpoint, final.stat().st_size)
            self._staged_meta.unlink(missing_ok=True)
        except BaseException as exc:
            Path(final.with_name(f".{final.name}.staged")).unlink(missing_ok=True)
            self._staged_meta.unlink(missing_ok=True)
            self.triples_path = final
            meta = self._read_meta()
            self._checkpoint, self._approval, self._damage = meta.checkpoint, meta.approval, damage
            self._declared = set() if damage else self._read_declared(meta.declared or 0)
            if isinstance(exc, OSError):
                raise write_failed(self.name, final, exc) from exc
            raise

    def snapshot(self) -> Any:
        return self.triples_path.read_bytes()

    def close(self) -> None:
        return None

    def graph(self) -> Graph:
        """The whole provenance graph, parsed (for queries and other serializations)."""
        return load_graph(self.triples_path)

    # -- files -------------------------------------------------------------------------

    def _read_meta(self) -> _Meta:
        return read_meta(self.path)

    def _write_meta(self, checkpoint: int, offset: int) -> None:
        declared = self.declared_path.stat().st_size if self.declared_path.exists() else 0
        mark = mark_at(self.log, checkpoint)
        meta = _Meta(
            checkpoint=checkpoint,
            offset=offset,
            declared=declared,
            approval=self._approval,
            log=mark,
        )
        write_atomically(self.meta_path, [meta.model_dump_json(exclude_none=True).encode()])
        self._checkpoint, self._offset, self._mark = checkpoint, offset, mark

    def _read_declared(self, length: int) -> set[str]:
        with open_private(self.declared_path, "ab+") as handle:
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
    """The PROV projection at ``path`` serialized as Turtle, JSON-LD or N-Triples, up to its
    checkpoint (what a crash left past it is not part of the store). A file cut short, or
    one that does not parse, is a ``ProjectionError`` in one line."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
    path = Path(path)
    meta = read_meta(path)
    if (damage := damage_of(path, meta)) is not None:
        raise ProjectionError(f"{damage}; rebuild it from the log")
    with open(path, "rb") as handle:
        data = handle.read(meta.offset) if meta.offset else handle.read()
    if fmt == "nt":
        return data
    graph = Graph()
    graph.bind("prov", PROV)
    graph.bind("writegate", WG)
    try:
        graph.parse(data=data, format="nt")
    except Exception as exc:  # rdflib's parsers raise several kinds; each is one message
        raise ProjectionError(f"{path} is not N-Triples: {one_line(exc)}") from exc
    return graph.serialize(format=fmt).encode()
