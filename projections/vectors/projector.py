"""The vector follower: a projector that embeds the text index's documents each batch of
events touched and keeps their vectors beside the read model.

It runs where every projector runs (``writegate follow``, ``replay``, ``rebuild``; its lag
in ``writegate status``), never in an append: a write to the log neither computes a vector
nor waits for one. For each batch it reads, in one snapshot of the log, the documents of
the entities the events name in their streams (``projections.search``: node, relationship,
and any later kind the index keeps), embeds them outside any write transaction, then
writes the vectors with the checkpoint in one short transaction of its own store. A
document gone from the index leaves a row without a vector, so readers forget it; a
forgetting's or an expiry's receipt touches the entities of the events it names, so their
vectors are made again from what their documents now say (or dropped).

The vectors are those of the documents as the read model holds them when the batch is
applied: a replay to an earlier seq marks which entities had been written by then, not
what they said. Any order of batches ends in the same store (each entity touched, as it
is now), so a rebuild — reset, then every event — equals the store it replaces.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from writegate.eventlog import EventCore, Log
from writegate.eventlog.sealing import EXPIRED, FORGOTTEN, SubjectsForgotten, ValuesExpired
from writegate.eventlog.sql import Sql
from writegate.projections.contract import LogMark, ProjectionError, check_batch, mark_at
from writegate.projections.files import make_private
from writegate.projections.search import text_index_for
from writegate.projections.vectors.contract import Embedder, Entry, Similar, VectorState
from writegate.projections.vectors.rows import VectorRows, vector_index_for


def default_path(log: Log) -> Path:
    """Where a SQLite log's vectors are kept unless configured: beside the log's file,
    named after it (``var/demo.db`` -> ``var/demo-vectors.db``)."""
    where = Path(log.describe())
    return where.with_name(f"{where.stem}-vectors.db")


class VectorProjector:
    """Vectors of a log's text index, in a SQLite file of their own (a SQLite log) or in
    the PostgreSQL log's database."""

    forgets_in_place: Literal[True] = True  # a receipt's entities are embedded again

    def __init__(
        self, log: Log, embedder: Embedder, *, path: Path | None = None, name: str = "vectors"
    ) -> None:
        self.name, self.log, self.embedder = name, log, embedder
        self._own: sqlite3.Connection | None = None
        if isinstance(log.connection(), sqlite3.Connection):
            self.path = path or default_path(log)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            make_private(self.path)
            self._own = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._own.execute("PRAGMA journal_mode = WAL")
            self._own.execute("PRAGMA synchronous = NORMAL")
        self.index: VectorRows = vector_index_for(self.conn)
        if not log.readonly or self._own is not None:
            self.index.install(self.conn)

    @property
    def conn(self) -> Sql:
        """The store's connection: its own file's, or this thread's to the log's database."""
        return self._own if self._own is not None else self.log.connection()

    def describe(self) -> str:
        where = str(self.path) if self._own is not None else self.log.describe()
        return f"vectors by {self.embedder.name} in {where}"

    # -- the projector contract -------------------------------------------------------

    def checkpoint(self) -> int:
        return self.index.state(self.conn).seq

    def apply(self, events: Sequence[EventCore]) -> int:
        seq = self.checkpoint()
        check_batch(self.name, seq, events)
        fresh = [event for event in events if event.seq > seq]
        if not fresh:
            return seq
        touched = [*fresh, *self._held_by_receipts(fresh)]
        named = (stream.partition(":")[2] for event in touched for stream in event.streams)
        identities = list(dict.fromkeys(i for i in named if i))
        with self.log.snapshot() as read:
            documents = text_index_for(read).documents_of(read, identities)
        vectors = self.embedder.embed([d.text for d in documents])
        entries = [Entry(d.identity, d.kind, vectors[i].tobytes()) for i, d in enumerate(documents)]
        kept = {d.identity for d in documents}
        last = fresh[-1].seq
        mark = mark_at(self.log, last)
        with self._writing() as conn:
            state = self._maker(self.index.state(conn))
            check_batch(self.name, state.seq, fresh)  # another follower may have moved it
            if state.seq >= last:
                return state.seq  # ... past this batch: nothing to add
            gone = [i for i in self.index.stored(conn, identities) if i not in kept]
            made = replace(
                state,
                embedder=self.embedder.name,
                dimensions=self.embedder.dimensions,
                mark=mark.model_dump_json() if mark else None,
            )
            self.index.write(conn, [*entries, *(Entry(i, "", None) for i in gone)], last, made)
        return last

    def _held_by_receipts(self, events: Sequence[EventCore]) -> list[EventCore]:
        """The events a forgetting's or an expiry's receipt names: their entities' documents
        no longer say what they said, and neither may their vectors."""
        held = [
            seq
            for event in events
            if event.type in (FORGOTTEN, EXPIRED)
            for seq in (SubjectsForgotten if event.type == FORGOTTEN else ValuesExpired)
            .model_validate(event.payload)
            .events
        ]
        return list(self.log.read_seqs(held).values()) if held else []

    def reset(self) -> None:
        with self._writing() as conn:
            self.index.reset(conn, self.embedder.name, self.embedder.dimensions)

    def snapshot(self) -> Any:
        return [(e.identity, e.kind, e.vector) for e in self.index.entries(self.conn)]

    def close(self) -> None:
        if self._own is not None:
            self._own.close()

    # -- Marked, Inspected ------------------------------------------------------------

    def mark(self) -> LogMark | None:
        recorded = self.index.state(self.conn).mark
        return LogMark.model_validate_json(recorded) if recorded else None

    def adopt(self) -> None:
        mark = mark_at(self.log, self.checkpoint())
        with self._writing() as conn:
            state = self.index.state(conn)
            json = mark.model_dump_json() if mark else None
            self.index.write(conn, [], state.seq, replace(state, mark=json))

    def damage(self) -> str | None:
        """Vectors another embedder made: comparing them with this one's means nothing."""
        made = self.index.state(self.conn)
        if made.embedder and made.embedder != self.embedder.name:
            return (
                f"its vectors were made by {made.embedder}, not the configured {self.embedder.name}"
            )
        return None

    # -- reading ----------------------------------------------------------------------

    def nearest(self, text: str, k: int, kind: str) -> list[Similar]:
        """The ``k`` documents of ``kind`` nearest in meaning to ``text``, most similar
        first (an exact search over every stored vector of that kind); none while the
        store holds another embedder's vectors (they mean nothing to this one's query)."""
        if self.damage() is not None:
            return []
        return self.index.nearest(self.conn, self.embedder.embed([text]), k, kind)

    def warm(self) -> None:
        """Read the store into memory now (a server's start), not at the first query: the
        first read takes every vector (about a second per 10,000 on a busy machine)."""
        self.index.nearest(self.conn, np.zeros(self.embedder.dimensions, np.float32), 1, "")

    # -- helpers ----------------------------------------------------------------------

    def _maker(self, state: VectorState) -> VectorState:
        if state.embedder and state.embedder != self.embedder.name:
            raise ProjectionError(f"{self.name}: {self.damage()}; rebuild it from the log")
        return state

    @contextmanager
    def _writing(self) -> Iterator[Sql]:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
