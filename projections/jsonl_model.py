"""The graph the JSONL snapshot renders, kept in an SQLite file beside it, not in Python.

Following a large graph must cost per batch what the batch costs. Held in Python, the
model cost memory in proportion to the graph (0.9 to 1.1 GB at a million events) and had to be
rebuilt from the log on every start; here it lives on disk behind a bounded page cache. A
batch reads only the rows it touches, keeps them in ``pending`` while it applies, and
writes them back in one transaction with the checkpoint. Each node's metadata strings are
rendered when it is written, so rendering the file is one pass over stored rows in identity
order (the primary key's) — see ``node_rows`` and ``edge_rows``.

The rules are the state read model's (``projections.state``): a null property removes it, a
relationship creates missing endpoints as stubs, a node write clears the stub flag, the
breadcrumbs (remapped, resolved from) are kept. ``tests/projections/test_jsonl.py`` checks
the two agree.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import orjson

from writegate.eventlog import EventCore
from writegate.language import (
    NodeCorroborated,
    NodeDeleted,
    NodeRef,
    NodeWritten,
    RelationshipCorroborated,
    RelationshipDeleted,
    RelationshipWritten,
    SourceRetracted,
    SourceUnretracted,
    payload_of,
    provenance_of,
    writer_of,
)
from writegate.projections.files import make_private
from writegate.projections.jsonl_lines import (
    heard_lines,
    origin_lines,
    plain_name,
    property_lines,
)
from writegate.projections.jsonl_records import (
    EdgeRecord,
    NodeRecord,
    cited,
    edge_record,
    node_record,
)
from writegate.projections.state import merge_properties

CACHE_KIB = 32 * 1024  # SQLite's page cache: what the model may hold in memory

SCHEMA = """
CREATE TABLE IF NOT EXISTS jsonl_nodes (
    identity TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    name TEXT NOT NULL,         -- the name the snapshot shows, unless another node has it
    properties BLOB NOT NULL,   -- JSON: what the next write merges into
    remapped_from TEXT,
    stub INTEGER NOT NULL,
    lines BLOB NOT NULL,        -- JSON: the metadata (observation) strings, rendered
    resolved_from TEXT,         -- the identity a write entity resolution landed here named
    heard BLOB                  -- JSON: its corroboration's strings (NULL: none since written)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS jsonl_edges (
    identity TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    start_node TEXT NOT NULL,
    end_node TEXT NOT NULL,
    properties BLOB NOT NULL,
    weight BLOB NOT NULL        -- JSON: the relationship's confidence
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS jsonl_checkpoint (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    seq INTEGER NOT NULL
);
INSERT OR IGNORE INTO jsonl_checkpoint VALUES (1, 0);
"""
# which names clash: kept while following; a rebuild makes it once at the end, in one pass
NAME_INDEX = "CREATE INDEX IF NOT EXISTS jsonl_nodes_by_name ON jsonl_nodes (name)"
CLASH = (
    "EXISTS (SELECT 1 FROM jsonl_nodes d WHERE d.name = {0}.name AND d.identity <> {0}.identity)"
)
NODE_ROWS = (
    f"SELECT n.name, n.label, n.lines, n.heard, {CLASH.format('n')} FROM jsonl_nodes n "
    "ORDER BY n.identity"
)
EDGE_ROWS = (
    f"SELECT e.identity, e.type, e.weight, s.name, s.label, {CLASH.format('s')}, "
    f"t.name, t.label, {CLASH.format('t')} FROM jsonl_edges e "
    "LEFT JOIN jsonl_nodes s ON s.identity = e.start_node "
    "LEFT JOIN jsonl_nodes t ON t.identity = e.end_node ORDER BY e.identity"
)
NodeRow = tuple[str, str, bytes, int]  # name, label, lines, clash
EdgeRow = tuple[str, str, bytes, str | None, str | None, int, str | None, str | None, int]


def _shape(conn: sqlite3.Connection) -> dict[str, list[str]]:
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {t: [c[1] for c in conn.execute(f"PRAGMA table_info({t})")] for t in tables}


def is_current(path: Path) -> bool:
    """Whether the model file exists with the shape this code writes. A file of an older
    shape is not patched (a column added would leave the rows stored before without what it
    holds, unlike a rebuild's): the projector builds a new one from the log."""
    if not path.exists():
        return False
    with closing(sqlite3.connect(":memory:")) as fresh, closing(sqlite3.connect(path)) as conn:
        fresh.executescript(SCHEMA)
        return _shape(conn) == _shape(fresh)


class GraphModel:
    """``bulk``: a file being built aside (a rebuild), not read by anyone until it is
    complete, so it is written without syncs (it is synced once, before the swap); its
    write-ahead log keeps each commit whole if the process dies, so a resumed rebuild
    continues from the last one."""

    def __init__(self, path: Path, *, bulk: bool = False) -> None:
        self.path = path
        make_private(path)  # SQLite gives its -wal and -shm the file's own permissions
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        if bulk:  # a WAL even so: a rebuild killed half way resumes from its last commit
            self.conn.execute("PRAGMA locking_mode = EXCLUSIVE")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = OFF")
        else:
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        self.conn.executescript(SCHEMA)
        if not bulk:
            self.conn.execute(NAME_INDEX)
        self._checkpoint: int = self.conn.execute("SELECT seq FROM jsonl_checkpoint").fetchone()[0]
        self.nodes: dict[str, NodeRecord | None] = {}  # pending: written, not yet stored
        self.edges: dict[str, EdgeRecord | None] = {}  # (None: deleted)
        self.heard: dict[str, list[str]] = {}  # corroborations of nodes stored, not pending

    def checkpoint(self) -> int:
        """The last seq applied (stored, or pending while building aside)."""
        return self._checkpoint

    def stored(self) -> int:
        """The checkpoint as stored: behind ``checkpoint`` while rows are pending."""
        return int(self.conn.execute("SELECT seq FROM jsonl_checkpoint").fetchone()[0])

    def pending(self) -> int:
        return len(self.nodes) + len(self.edges)

    # -- applying ------------------------------------------------------------------------

    def apply(self, events: Sequence[EventCore]) -> None:
        """Apply ``events`` to the pending rows; ``commit`` stores them."""
        for event in events:
            self._apply(event)
        self._checkpoint = max(self._checkpoint, events[-1].seq) if events else self._checkpoint

    def _apply(self, event: EventCore) -> None:
        match payload_of(event):
            case NodeWritten(node=node, properties=properties, resolved_from=resolved) as written:
                shown, by = cited(provenance_of(event)), writer_of(event, written)
                self._upsert(event, shown, by, node, properties, stub=False, resolved=resolved)
            case RelationshipWritten() as written:
                provenance, by = provenance_of(event), writer_of(event, written)
                for ref in written.stubs_created:
                    if self._node(ref.identity) is None:
                        self._upsert(event, cited(provenance), by, ref, {}, stub=True)
                current = self._edge_properties(written.identity)
                self.edges[written.identity] = EdgeRecord(
                    written.type,
                    written.from_node.identity,
                    written.to_node.identity,
                    merge_properties(current or {}, written.properties),
                    provenance.confidence if provenance else None,
                )
            case NodeCorroborated(node=node) as heard:
                said = heard_lines(heard.corroborated_confidence, heard.sources)
                record = self.nodes.get(node.identity)
                if record is not None:
                    record.heard = said
                elif node.identity not in self.nodes:
                    self.heard[node.identity] = said
            case RelationshipCorroborated(identity=identity) as heard:
                edge = self._edge(identity)
                if edge is not None:  # its weight: the corroborated confidence
                    edge.confidence = heard.corroborated_confidence
                    self.edges[identity] = edge
            case SourceRetracted() | SourceUnretracted() as retraction:
                for fact in retraction.facts:  # each as its image after says
                    self.heard.pop(fact.identity, None)
                    if fact.kind == "relationship":
                        self.edges[fact.identity] = edge_record(fact)
                    else:
                        held = self._node(fact.identity)
                        resolved = held[2] if held is not None else None
                        self.nodes[fact.identity] = node_record(fact, resolved)
            case NodeDeleted(node=node):
                self.nodes[node.identity] = None
            case RelationshipDeleted(identity=identity):
                self.edges[identity] = None
            case _:
                pass

    def _upsert(
        self,
        event: EventCore,
        shown: tuple[Any, ...],
        by: str,
        ref: NodeRef,
        changes: dict[str, Any],
        *,
        stub: bool,
        resolved: str | None = None,
    ) -> None:
        current = self._node(ref.identity)
        base, remapped_from, resolved_from = current if current else ({}, None, None)
        self.heard.pop(ref.identity, None)  # a new version: what corroborated the old is gone
        self.nodes[ref.identity] = NodeRecord(
            ref.label,
            ref.keys,
            merge_properties({**base, **ref.keys}, changes),
            shown,
            stub,
            ref.remapped_from or remapped_from,
            resolved or resolved_from,
            event.occurred_at,
            by,
        )

    def _node(self, identity: str) -> tuple[dict[str, Any], str | None, str | None] | None:
        """A node's properties and breadcrumbs: remapped, resolved (None: no such node)."""
        if identity in self.nodes:
            record = self.nodes[identity]
            if record is None:
                return None
            return record.properties, record.remapped_from, record.resolved_from
        row = self.conn.execute(
            "SELECT properties, remapped_from, resolved_from FROM jsonl_nodes WHERE identity = ?",
            (identity,),
        ).fetchone()
        return None if row is None else (orjson.loads(row[0]), row[1], row[2])

    def _edge(self, identity: str) -> EdgeRecord | None:
        if identity in self.edges:
            return self.edges[identity]
        row = self.conn.execute(
            "SELECT type, start_node, end_node, properties, weight FROM jsonl_edges "
            "WHERE identity = ?",
            (identity,),
        ).fetchone()
        if row is None:
            return None
        return EdgeRecord(row[0], row[1], row[2], orjson.loads(row[3]), orjson.loads(row[4]))

    def _edge_properties(self, identity: str) -> dict[str, Any] | None:
        if identity in self.edges:
            record = self.edges[identity]
            return None if record is None else record.properties
        row = self.conn.execute(
            "SELECT properties FROM jsonl_edges WHERE identity = ?", (identity,)
        ).fetchone()
        return None if row is None else orjson.loads(row[0])

    # -- storing -------------------------------------------------------------------------

    def commit(self) -> None:
        """Store the pending rows and the checkpoint in one transaction."""
        dumps = orjson.dumps
        origins: dict[tuple[Any, ...], list[str]] = {}  # nodes written together share them
        upserts, deletes = [], []
        for identity, node in self.nodes.items():
            if node is None:
                deletes.append((identity,))
                continue
            origin = (
                node.cited,
                node.updated_by,
                node.updated_at,
                node.remapped_from,
                node.stub,
                node.resolved_from,
            )
            lines = origins.get(origin)
            if lines is None:
                lines = origins[origin] = origin_lines(*origin)
            upserts.append(
                (
                    identity,
                    node.label,
                    plain_name(node.keys, identity),
                    dumps(node.properties),
                    node.remapped_from,
                    int(node.stub),
                    dumps(property_lines(node.properties, node.keys) + lines),
                    node.resolved_from,
                    None if node.heard is None else dumps(node.heard),
                )
            )
        heard = [(dumps(said), identity) for identity, said in self.heard.items()]
        edges = [
            (identity, e.type, e.start, e.end, dumps(e.properties), dumps(e.confidence))
            for identity, e in self.edges.items()
            if e is not None
        ]
        gone = [(identity,) for identity, e in self.edges.items() if e is None]
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("DELETE FROM jsonl_nodes WHERE identity = ?", deletes)
            conn.executemany(
                "INSERT OR REPLACE INTO jsonl_nodes VALUES (?,?,?,?,?,?,?,?,?)", upserts
            )
            conn.executemany("UPDATE jsonl_nodes SET heard = ? WHERE identity = ?", heard)
            conn.executemany("DELETE FROM jsonl_edges WHERE identity = ?", gone)
            conn.executemany("INSERT OR REPLACE INTO jsonl_edges VALUES (?,?,?,?,?,?)", edges)
            conn.execute("UPDATE jsonl_checkpoint SET seq = ?", (self._checkpoint,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite rolls back itself when the disk is full
                conn.execute("ROLLBACK")
            self.discard()
            raise
        self.nodes.clear()
        self.edges.clear()
        self.heard.clear()

    def discard(self) -> None:
        """Forget the pending rows (a batch that failed half way): back to what is stored."""
        self.nodes.clear()
        self.edges.clear()
        self.heard.clear()
        self._checkpoint = self.stored()

    def reset(self) -> None:
        self.nodes.clear()
        self.edges.clear()
        self.heard.clear()
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("DELETE FROM jsonl_nodes")
        self.conn.execute("DELETE FROM jsonl_edges")
        self.conn.execute("UPDATE jsonl_checkpoint SET seq = 0")
        self.conn.execute("COMMIT")
        self._checkpoint = 0

    def set_checkpoint(self, seq: int) -> None:
        """Store ``seq`` as the checkpoint as it is (what an older snapshot's file said)."""
        self.conn.execute("UPDATE jsonl_checkpoint SET seq = ?", (seq,))
        self._checkpoint = seq

    def close(self) -> None:
        self.conn.close()

    # -- reading -------------------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One read transaction: the rows read inside it are of one moment."""
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    def node_rows(self) -> Iterator[NodeRow]:
        """Nodes in identity order, with the names they show and whether another node has
        the same name (a corroborated node's strings end with its corroboration's)."""
        for name, label, lines, heard, clash in self.conn.execute(NODE_ROWS):
            yield name, label, lines if heard is None else lines[:-1] + b"," + heard[1:], clash

    def edge_rows(self) -> Iterator[EdgeRow]:
        """Relationships in identity order, with their endpoints' names (None: missing)."""
        return self.conn.execute(EDGE_ROWS)
