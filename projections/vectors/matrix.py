"""The in-memory copy of a store's vectors that a nearest-neighbour search scans.

One compact float32 matrix per kind, a row per document. Measured here (256 dimensions,
2 shared cores): a scan of 10,000 rows takes ~0.5 ms and of 100,000 ~15-30 ms — faster
than sqlite-vec's ``vec0`` over the same rows (8 and 67 ms), which this Python's sqlite3
cannot load anyway, and pgvector is not packaged for the PostgreSQL here. The copy is
brought up to date from the rows written since it was last read (each row records the
version of the write that made it), so a query after a batch reads that batch, not the
store; a reset (a new generation) makes it read everything again.

A scan (and an embedding) runs BLAS on one thread: OpenBLAS starts a thread per core for a
product, and on cores shared with the gate, a follower and other work those threads wait
on each other — 10,000 rows took 10 ms at p50 with two threads and 1 ms with one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np
from threadpoolctl import ThreadpoolController

from writegate.projections.vectors.contract import Entry, Similar, Vectors, unit_rows

_FIRST_ROWS = 1024
_POOLS = ThreadpoolController()  # the BLAS libraries loaded (numpy's), found once


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on this thread alone while inside (see the module's docstring)."""
    with _POOLS.limit(limits=1, user_api="blas"):
        yield


class KindMatrix:
    """The rows of one kind: identities, their vectors, and the free rows of gone ones."""

    def __init__(self, dimensions: int) -> None:
        self.rows: Vectors = np.zeros((_FIRST_ROWS, dimensions), dtype=np.float32)
        self.identities: list[str | None] = []
        self.where: dict[str, int] = {}
        self.free: list[int] = []
        self.live = np.zeros(_FIRST_ROWS, dtype=bool)

    def put(self, identities: list[str], vectors: Vectors) -> None:
        """Each identity's row set to its vector (a new identity takes a free row)."""
        at = np.empty(len(identities), dtype=np.intp)
        for n, identity in enumerate(identities):
            row = self.where.get(identity)
            if row is None:
                row = self.free.pop() if self.free else self._grow()
                self.where[identity] = row
                self.identities[row] = identity
            at[n] = row
        self.rows[at] = vectors
        self.live[at] = True

    def drop(self, identity: str) -> None:
        row = self.where.pop(identity, None)
        if row is not None:
            self.identities[row] = None
            self.rows[row] = 0.0
            self.live[row] = False
            self.free.append(row)

    def _grow(self) -> int:
        row = len(self.identities)
        if row == len(self.rows):
            self.rows = np.concatenate([self.rows, np.zeros_like(self.rows)])
            self.live = np.concatenate([self.live, np.zeros_like(self.live)])
        self.identities.append(None)
        return row

    def nearest(self, query: Vectors, k: int) -> list[Similar]:
        """The ``k`` rows most similar to ``query``, of those similar at all (> 0): a row
        of no words, or one pointing away, is no neighbour."""
        used = len(self.identities)
        if k <= 0 or not self.where:
            return []
        scores = self.rows[:used] @ query
        scores[~self.live[:used] | (scores <= 0)] = -np.inf
        similar = int(np.count_nonzero(scores > -np.inf))
        k = min(k, similar)
        if k == 0:
            return []
        if k < used:
            # every row scoring at least the k-th best: ties at the edge are decided by
            # identity below, whatever order the partition left them in
            edge = np.partition(scores, used - k)[used - k]
            chosen = np.flatnonzero(scores >= edge)
        else:
            chosen = np.flatnonzero(scores > -np.inf)
        ranked = sorted(
            ((float(scores[i]), self.identities[i] or "") for i in chosen),
            key=lambda pair: (-pair[0], pair[1]),
        )
        return [Similar(identity, score) for score, identity in ranked[:k]]


class VectorMatrix:
    """Every kind's rows, as of one (generation, version) of the store; thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.generation = -1  # nothing read yet
        self.version = 0
        self.dimensions = 0
        self.kinds: dict[str, KindMatrix] = {}

    def restart(self, generation: int, dimensions: int) -> None:
        """Forget everything: the store was reset (or is read for the first time)."""
        self.generation, self.version, self.dimensions = generation, 0, dimensions
        self.kinds = {}

    def apply(self, entries: Iterable[Entry], version: int) -> None:
        """Take in the rows written since ``self.version``, up to ``version``."""
        put: dict[str, dict[str, bytes]] = {}  # kind -> identity -> vector, the last one kept
        for entry in entries:
            for other, rows in put.items():
                if other != entry.kind:
                    rows.pop(entry.identity, None)
            for other, matrix in self.kinds.items():  # gone, or (rarely) of another kind now
                if entry.vector is None or other != entry.kind:
                    matrix.drop(entry.identity)
            if entry.vector is None:
                put.get(entry.kind, {}).pop(entry.identity, None)
            else:
                put.setdefault(entry.kind, {})[entry.identity] = entry.vector
        for kind, rows in put.items():
            if not rows:
                continue
            if kind not in self.kinds:
                self.kinds[kind] = KindMatrix(self.dimensions)
            vectors = np.frombuffer(b"".join(rows.values()), dtype=np.float32)
            self.kinds[kind].put(list(rows), vectors.reshape(len(rows), self.dimensions))
        self.version = version

    def nearest(self, vector: Vectors, k: int, kind: str) -> list[Similar]:
        matrix = self.kinds.get(kind)
        if matrix is None:
            return []
        query = unit_rows(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
        if query.shape[0] != self.dimensions:
            raise ValueError(
                f"a query vector of {query.shape[0]} dimensions; the store's have {self.dimensions}"
            )
        with one_blas_thread():
            return matrix.nearest(query, k)
