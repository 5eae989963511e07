"""The ``vector_*`` tables, written and read alike on both backends: a backend adds only
its column types and how it tells that the tables are there.

``vector_entries`` holds a row per document the follower embedded: its kind, the vector
(float32 bytes; NULL once the document is gone, so a reader's copy learns it is gone) and
the version of the write that made the row. ``vector_state`` is one row: the checkpoint,
the version (which only grows, across resets too), the generation (which grows with each
reset), who made the vectors and the mark of the log followed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence

from writegate.eventlog.sql import Sql, create_once
from writegate.projections.vectors.contract import Entry, Similar, Vectors, VectorState
from writegate.projections.vectors.matrix import VectorMatrix

SQLITE_TABLES = """
CREATE TABLE IF NOT EXISTS vector_entries (
    identity TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    version INTEGER NOT NULL,
    vector BLOB
);
CREATE INDEX IF NOT EXISTS vector_entries_version ON vector_entries (version);
CREATE TABLE IF NOT EXISTS vector_state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    seq INTEGER NOT NULL,
    version INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    embedder TEXT NOT NULL,
    dimensions INTEGER NOT NULL,
    mark TEXT
);
"""
POSTGRES_TABLES = """
CREATE TABLE IF NOT EXISTS vector_entries (
    identity TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    version BIGINT NOT NULL,
    vector BYTEA
);
CREATE INDEX IF NOT EXISTS vector_entries_version ON vector_entries (version);
CREATE TABLE IF NOT EXISTS vector_state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    seq BIGINT NOT NULL,
    version BIGINT NOT NULL,
    generation BIGINT NOT NULL,
    embedder TEXT NOT NULL,
    dimensions INTEGER NOT NULL,
    mark TEXT
);
"""

_IN_LIST = 500  # identities per IN (...) list
_EMPTY = VectorState(seq=0, version=0, generation=0, embedder="", dimensions=0, mark=None)
_STATE = "SELECT seq, version, generation, embedder, dimensions, mark FROM vector_state"
_PUT_STATE = (
    "INSERT INTO vector_state (one, seq, version, generation, embedder, dimensions, mark) "
    "VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, "
    "version = excluded.version, generation = excluded.generation, "
    "embedder = excluded.embedder, dimensions = excluded.dimensions, mark = excluded.mark"
)
_PUT = (
    "INSERT INTO vector_entries (identity, kind, version, vector) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (identity) DO UPDATE SET kind = excluded.kind, version = excluded.version, "
    "vector = excluded.vector"
)
_CHANGED = (
    "SELECT identity, kind, vector FROM vector_entries WHERE version > ? AND version <= ? "
    "ORDER BY version, identity"
)


class VectorRows:
    """The statements both backends run; ``nearest`` scans a copy kept in memory."""

    tables: tuple[str, ...] = ("vector_entries", "vector_state")
    script = SQLITE_TABLES

    def __init__(self) -> None:
        self.matrix = VectorMatrix()
        self._seen = False  # the tables were there once: nothing drops them

    def install(self, conn: Sql) -> None:
        if not self.installed(conn):
            create_once(conn, self.script, lambda: self._there(conn))

    def installed(self, conn: Sql) -> bool:
        self._seen = self._seen or self._there(conn)
        return self._seen

    def _there(self, conn: Sql) -> bool:
        raise NotImplementedError

    def state(self, conn: Sql) -> VectorState:
        if not self.installed(conn):
            return _EMPTY
        row = conn.execute(_STATE).fetchone()
        if row is None:
            return _EMPTY
        return VectorState(int(row[0]), int(row[1]), int(row[2]), row[3], int(row[4]), row[5])

    def write(
        self, conn: Sql, entries: Iterable[Entry], seq: int, state: VectorState
    ) -> VectorState:
        version = self.state(conn).version + 1
        width = state.dimensions * 4
        rows = []
        for entry in entries:
            if entry.vector is not None and len(entry.vector) != width:
                raise ValueError(
                    f"a vector of {len(entry.vector) // 4} dimensions for {entry.identity}; "
                    f"{state.embedder} makes {state.dimensions}"
                )
            rows.append((entry.identity, entry.kind, version, entry.vector))
        conn.executemany(_PUT, rows)
        new = VectorState(
            seq, version, state.generation, state.embedder, state.dimensions, state.mark
        )
        self._put_state(conn, new)
        return new

    def reset(self, conn: Sql, embedder: str, dimensions: int) -> None:
        old = self.state(conn)
        conn.execute("DELETE FROM vector_entries")
        new = VectorState(0, old.version + 1, old.generation + 1, embedder, dimensions, None)
        self._put_state(conn, new)

    def _put_state(self, conn: Sql, state: VectorState) -> None:
        conn.execute(
            _PUT_STATE,
            (
                state.seq,
                state.version,
                state.generation,
                state.embedder,
                state.dimensions,
                state.mark,
            ),
        )

    def entries(self, conn: Sql) -> Iterator[Entry]:
        if not self.installed(conn):
            return
        rows = conn.execute(
            "SELECT identity, kind, vector FROM vector_entries WHERE vector IS NOT NULL "
            "ORDER BY identity"
        )
        for row in rows:
            yield Entry(row[0], row[1], bytes(row[2]))

    def stored(self, conn: Sql, identities: Sequence[str]) -> list[str]:
        """Which of ``identities`` have a vector now (only those need marking gone)."""
        found: list[str] = []
        for start in range(0, len(identities), _IN_LIST):
            chunk = list(identities[start : start + _IN_LIST])
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT identity FROM vector_entries "
                f"WHERE vector IS NOT NULL AND identity IN ({marks})",
                chunk,
            )
            found.extend(row[0] for row in rows)
        return found

    def nearest(self, conn: Sql, vector: Vectors, k: int, kind: str) -> list[Similar]:
        with self.matrix.lock:
            self._refresh(conn)
            return self.matrix.nearest(vector, k, kind)

    def _refresh(self, conn: Sql) -> None:
        """Bring the copy up to the store: the rows written since it was read, or all of
        them after a reset. The rows read are bounded by the version just read, so a write
        or a reset committed meanwhile is left whole to the next call."""
        state = self.state(conn)
        matrix = self.matrix
        if (state.generation, state.dimensions) != (matrix.generation, matrix.dimensions):
            # a reset, or the first write to a store a reader found empty
            matrix.restart(state.generation, state.dimensions)
        if state.version > matrix.version:
            rows = conn.execute(_CHANGED, (matrix.version, state.version))
            found = (Entry(r[0], r[1], None if r[2] is None else bytes(r[2])) for r in rows)
            matrix.apply(found, state.version)


class SqliteVectorIndex(VectorRows):
    """The vectors in a SQLite file of their own: the follower's writes never hold the
    log's write lock, so no write to the log waits for them."""

    def _there(self, conn: Sql) -> bool:
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vector_state'"
        )
        return found.fetchone() is not None


class PostgresVectorIndex(VectorRows):
    """The vectors in the PostgreSQL log's database: the follower's rows take no lock an
    append takes (appends serialize on an advisory lock of their own)."""

    script = POSTGRES_TABLES

    def _there(self, conn: Sql) -> bool:
        return conn.execute("SELECT to_regclass('vector_state')").fetchone()[0] is not None


def vector_index_for(conn: Sql) -> VectorRows:
    """The index a connection's database keeps."""
    return SqliteVectorIndex() if isinstance(conn, sqlite3.Connection) else PostgresVectorIndex()
