"""What meaning costs and promises: an ``Embedder`` turns texts into vectors, a
``VectorIndex`` keeps one vector per document of the text index and finds the nearest.

Vectors are derived data. They are never in an event and never computed in an append: a
follower (``projector.VectorProjector``) embeds the text index's documents that each batch
of events touched, as the read model holds them now, and stores them beside the read model
with its checkpoint. A rebuild (reset, then every event again) makes the same store.

A vector is float32 and L2-normalised, so the similarity of two is their dot product
(cosine similarity, in [-1, 1]); a text with no words the model knows is the zero vector,
similar to nothing. ``testing`` holds the test cases an embedder and an index pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from writegate.eventlog.sql import Sql
from writegate.projections.vectors.settings import EmbedderUnavailable  # numpy-free there

__all__ = [
    "Embedder",
    "EmbedderUnavailable",
    "Entry",
    "Similar",
    "VectorIndex",
    "VectorState",
    "Vectors",
    "unit_rows",
]

Vectors = npt.NDArray[np.float32]  # n x d, one row per text


@runtime_checkable
class Embedder(Protocol):
    """A model that turns texts into vectors of meaning."""

    @property
    def name(self) -> str:
        """What the store records as the maker of its vectors: vectors of two embedders
        (or two versions of one) are not comparable, so a store refuses the other's."""
        ...

    @property
    def dimensions(self) -> int:
        """The length of every vector (known without loading the model)."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, in order: float32, each row of length 1 (or all zeros for a
        text that says nothing the model knows). The same text gives the same row, alone
        or in any batch. An empty sequence gives a 0 x ``dimensions`` array."""
        ...


def unit_rows(vectors: npt.NDArray[np.floating]) -> Vectors:
    """``vectors`` as float32 rows of length 1; a zero row stays zero (never NaN)."""
    rows = np.asarray(vectors, dtype=np.float32)
    lengths = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: Vectors = np.divide(rows, lengths, out=np.zeros_like(rows), where=lengths > 0)
    return unit


class Similar(NamedTuple):
    """One document near a query: its identity and the cosine similarity (higher: nearer)."""

    identity: str
    similarity: float


@dataclass(frozen=True)
class Entry:
    """One document's vector as stored (``vector`` None: the document is gone)."""

    identity: str
    kind: str  # the text index's kind: "node", "relationship", ...
    vector: bytes | None  # float32 little-endian, ``dimensions`` of them


@dataclass(frozen=True)
class VectorState:
    """The store's one row of bookkeeping, read in the same transaction as any change."""

    seq: int  # the checkpoint: the last event applied
    version: int  # grows with every write; an entry records the version that wrote it
    generation: int  # grows with every reset: a reader's copy from before is thrown away
    embedder: str  # who made the vectors ("" in an empty store: the next apply records it)
    dimensions: int
    mark: str | None  # the ``LogMark`` (JSON) of the log followed, at ``seq``


@runtime_checkable
class VectorIndex(Protocol):
    """The vectors kept in a database (a SQLite file of their own, or PostgreSQL beside the
    log), with an exact nearest-neighbour search over a copy kept in memory."""

    tables: tuple[str, ...]

    def install(self, conn: Sql) -> None:
        """Create the tables (nothing when they are there)."""
        ...

    def installed(self, conn: Sql) -> bool:
        """Whether the tables are there (a store nothing was applied to may have none)."""
        ...

    def state(self, conn: Sql) -> VectorState:
        """The bookkeeping row (an empty store's when none is there)."""
        ...

    def write(
        self, conn: Sql, entries: Iterable[Entry], seq: int, state: VectorState
    ) -> VectorState:
        """Store ``entries`` (replacing each identity's) and move the checkpoint to ``seq``
        with ``state``'s embedder and mark, in the caller's transaction; the new state."""
        ...

    def reset(self, conn: Sql, embedder: str, dimensions: int) -> None:
        """Forget every vector (the checkpoint goes to 0) and record who makes the next."""
        ...

    def entries(self, conn: Sql) -> Iterator[Entry]:
        """Every stored vector, in identity order (gone documents are not listed)."""
        ...

    def stored(self, conn: Sql, identities: Sequence[str]) -> list[str]:
        """Which of ``identities`` have a vector now."""
        ...

    def nearest(self, conn: Sql, vector: Vectors, k: int, kind: str) -> list[Similar]:
        """The ``k`` documents of ``kind`` whose vectors are nearest ``vector`` (a 1 x d or
        d array, normalised here), most similar first, ties by identity; exact, over every
        stored vector of that kind; only those similar at all (> 0), so a query of no words
        finds none. Reads only what changed since the last call."""
        ...
