"""The state read model's tables. ``projections.state`` owns them: every statement on them
is in this package, and nothing outside it names them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from writegate.eventlog.sql import Sql
from writegate.projections.search import Rows

# state_facts: who set each property value held now (a change is compared with it: conflicts);
# state_proposals: the review lane's queue (each held write, pending until decided);
# state_resolution_keys: the blocking keys of resolvable nodes (duplicates are index probes);
# a node's own row lists them (``state_nodes.resolution_keys``), so they are changed and
# deleted by their keys, with no second index by node;
# state_aliases: the identities of merged duplicates, each naming the node it resolves to;
# state_approved_agents: how many of each agent's held writes reviewers approved (trust earned)
# state_feedback: each rated node's or relationship's feedback weight (``feedback``), how
# many feedback events moved it, and the last one (applied again, at-least-once: skipped)
# state_observations: the texts agents kept (``language.observations``), one row each;
# state_citations: each write that cited an observation, by the fact it wrote (its identity
# and kind) and its seq, kept when the fact is deleted: where a write came from stays said
# state_value_counts: how many nodes hold each value a label weighs as evidence (``valuecounts``)
# state_support: the writes supporting each fact's current version (``support``): the one
# that wrote it and each corroboration since, with who, from what, how and how sure
# state_counts: how many nodes of each label, relationships of each type and stubs (``tallies``)
# state_passages: where each passage of a document starts in its text, and how long (``passages``)
# state_retracted: the sources and observations a standing retraction took back (``retracting``)
_NODE_FIELDS = """
    label TEXT NOT NULL,
    keys TEXT NOT NULL,
    properties TEXT NOT NULL,
    provenance TEXT NOT NULL,
    version INTEGER NOT NULL,
    stub INTEGER NOT NULL,
    remapped_from TEXT,
    created_seq INTEGER NOT NULL,
    updated_seq INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    scope TEXT NOT NULL DEFAULT 'default',
    resolution_keys TEXT,
    unsearchable TEXT"""
# where the text index follows rows (``projections.search.Rows``; SQLite's): each node's text
# in its row, numbered for the index (``document``); elsewhere the index keeps node documents
NODES = f"""
CREATE TABLE IF NOT EXISTS state_nodes (
    identity TEXT PRIMARY KEY,{_NODE_FIELDS}
) WITHOUT ROWID;
"""
NODES_WITH_TEXT = f"""
CREATE TABLE IF NOT EXISTS {{table}} (
    document INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,{_NODE_FIELDS},
    text TEXT
);
"""
NODE_DOCUMENTS = """
CREATE VIEW IF NOT EXISTS state_node_documents AS
    SELECT document AS rowid, identity, 'node' AS kind, text,
        scope AS scope_from, scope AS scope_to
    FROM state_nodes WHERE text IS NOT NULL;
"""
NODE_ROWS = Rows(kind="node", table="state_nodes", key="document", view="state_node_documents")
TABLES = """
CREATE TABLE IF NOT EXISTS state_relationships (
    identity TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    from_identity TEXT NOT NULL,
    to_identity TEXT NOT NULL,
    properties TEXT NOT NULL,
    provenance TEXT NOT NULL,
    version INTEGER NOT NULL,
    remapped_from TEXT,
    created_seq INTEGER NOT NULL,
    updated_seq INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);
DROP INDEX IF EXISTS state_rel_from;
DROP INDEX IF EXISTS state_rel_from_ordered;
-- a walk's step reads a node's relationships from these alone (``walk``)
CREATE INDEX IF NOT EXISTS state_rel_from_walk
    ON state_relationships (from_identity, identity, type, to_identity);
CREATE TABLE IF NOT EXISTS state_facts (
    identity TEXT NOT NULL,
    property TEXT NOT NULL,
    seq INTEGER NOT NULL,
    agent TEXT NOT NULL,
    provenance TEXT NOT NULL,
    PRIMARY KEY (identity, property)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_proposals (
    proposal TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL,
    decided_seq INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS state_proposals_status ON state_proposals (status, seq);
CREATE TABLE IF NOT EXISTS state_approved_agents (
    agent TEXT PRIMARY KEY,
    approved INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_resolution_keys (
    key TEXT NOT NULL,
    identity TEXT NOT NULL,
    PRIMARY KEY (key, identity)
) WITHOUT ROWID;
DROP INDEX IF EXISTS state_resolution_keys_identity;
DROP INDEX IF EXISTS state_rel_to;
DROP INDEX IF EXISTS state_rel_to_ordered;
CREATE INDEX IF NOT EXISTS state_rel_to_walk
    ON state_relationships (to_identity, identity, type, from_identity);
CREATE TABLE IF NOT EXISTS state_aliases (
    alias TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    merge TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS state_aliases_identity ON state_aliases (identity);
CREATE TABLE IF NOT EXISTS state_feedback (
    identity TEXT PRIMARY KEY,
    weight DOUBLE PRECISION NOT NULL,
    updates INTEGER NOT NULL,
    last_seq INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_observations (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    source TEXT NOT NULL,
    method TEXT NOT NULL,
    reliability DOUBLE PRECISION NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    agent TEXT NOT NULL,
    session TEXT,
    said_at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    seq INTEGER NOT NULL,
    scope TEXT NOT NULL DEFAULT 'default'
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_citations (
    observation TEXT NOT NULL,
    identity TEXT NOT NULL,
    kind TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (observation, identity, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_passages (
    observation TEXT NOT NULL,
    start INTEGER NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (observation, start)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS state_citations_identity ON state_citations (identity, seq);
CREATE INDEX IF NOT EXISTS state_observations_said ON state_observations (session, said_at, seq);
CREATE TABLE IF NOT EXISTS state_value_counts (
    key TEXT PRIMARY KEY,
    count INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_support (
    identity TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    version INTEGER NOT NULL,
    agent TEXT NOT NULL,
    source TEXT NOT NULL,
    method TEXT NOT NULL,
    reliability DOUBLE PRECISION NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    corroborated DOUBLE PRECISION NOT NULL,
    observations TEXT NOT NULL,
    valid_from TEXT,
    valid_to TEXT,
    occurred_at TEXT NOT NULL,
    PRIMARY KEY (identity, seq)
) WITHOUT ROWID;
-- a read asks each fact it shows for its corroborations; most have none, and this index
-- holds only theirs, so asking costs one probe of a small index, not every write's row
CREATE INDEX IF NOT EXISTS state_support_corroborated ON state_support (kind, identity, seq)
    WHERE kind = 'corroborated';
CREATE TABLE IF NOT EXISTS state_counts (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (kind, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_retracted (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    retraction TEXT NOT NULL,
    PRIMARY KEY (kind, name, retraction)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS projection_checkpoints (
    name TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
);
"""
# the tables' layout: a read model of an older layout is rebuilt from the log when a writer
# opens it (``StateProjection.install``); read-only, it is compared on the tables it has
TEXT_LAYOUT = 8  # the first layout with the text index (``projections.search``)
FEEDBACK_LAYOUT = 9  # the first with the feedback weights
OBSERVATIONS_LAYOUT = 10  # the first with observations and the writes citing them
SCOPES_LAYOUT = 12  # the first with each node's scope
OBSERVATION_SCOPES_LAYOUT = 13  # the first with each observation's scope
VALUE_COUNTS_LAYOUT = 15  # the first with the value counts of evidence fields
SUPPORT_LAYOUT = 16  # the first with each fact's supporting writes (corroboration)
COUNTS_LAYOUT = 18  # the first with the counts of labels, types and stubs
PASSAGES_LAYOUT = 23  # the first with a document's passages
RETRACTED_LAYOUT = 24  # the first with the sources and observations retractions took back
LAYOUT = 24  # 7: the resolution index's keys are ranges' rows (``blocking``); 8: the text
# index; 9: the feedback weights; 10: observations and the writes citing them (and their
# words in the text index); 11: the text index stems its words (``projections.search``);
# 12: each node's scope, and both ends' in the text index (``scoping``); 13: each
# observation's scope, in its row and its document; 14: a node's relationships indexed in
# identity order (a walk's bounded step reads no more than it keeps), and on SQLite one
# FTS5 table per kind of document; 15: the value counts of evidence fields; 16: the writes
# supporting each fact (``support``); 17: the corroborations indexed on their own, and a
# node's relationships indexed with what a walk reads of them (``walk``); 18: the counts
# of labels, types and stubs (``tallies``); 19: a node's resolution keys in its own row,
# the index's second index (by node) gone; 20: the properties a node's text leaves out,
# in its row (``searchable``: a column added, nothing rebuilt); 21: on SQLite, a node's
# text in its own row, numbered for FTS5 (``nodetext``: the table made again in place);
# 22: a node's evidence keys counted, not indexed (``blocking.probed``: rows deleted in place);
# 23: a document's passages (``passages``: a table added, nothing rebuilt); 24: what standing
# retractions took back (``retracting``: a table added, nothing rebuilt)
EVIDENCE_UNINDEXED = 22
REBUILT_BELOW = 19  # a read model of an older layout is rebuilt; from it, columns are added
LAYOUT_MARK = "state.layout"  # a row of projection_checkpoints: the tables' layout
STATE_TABLES = {  # every table of the read model (but its checkpoints), by its primary key
    "state_nodes": ("identity",),
    "state_relationships": ("identity",),
    "state_facts": ("identity", "property"),
    "state_proposals": ("proposal",),
    "state_approved_agents": ("agent",),
    "state_resolution_keys": ("key", "identity"),
    "state_aliases": ("alias",),
    "state_feedback": ("identity",),
    "state_observations": ("id",),
    "state_citations": ("observation", "identity", "seq"),
    "state_value_counts": ("key",),
    "state_support": ("identity", "seq"),
    "state_counts": ("kind", "name"),
    "state_passages": ("observation", "start"),
    "state_retracted": ("kind", "name", "retraction"),
}
_UNTIL_RETRACTED = tuple(t for t in STATE_TABLES if t != "state_retracted")
LAYOUT_TABLES = {  # the layouts that added tables, and the tables a read model of each has
    1: ("state_nodes", "state_relationships"),
    2: ("state_facts", "state_nodes", "state_relationships"),
    3: ("state_facts", "state_nodes", "state_proposals", "state_relationships"),
    4: (
        "state_facts",
        "state_nodes",
        "state_proposals",
        "state_relationships",
        "state_resolution_keys",
    ),
    5: (
        "state_aliases",
        "state_facts",
        "state_nodes",
        "state_proposals",
        "state_relationships",
        "state_resolution_keys",
    ),
    6: (
        "state_aliases",
        "state_approved_agents",
        "state_facts",
        "state_nodes",
        "state_proposals",
        "state_relationships",
        "state_resolution_keys",
    ),
    FEEDBACK_LAYOUT: (
        "state_aliases",
        "state_approved_agents",
        "state_facts",
        "state_feedback",
        "state_nodes",
        "state_proposals",
        "state_relationships",
        "state_resolution_keys",
    ),
    OBSERVATIONS_LAYOUT: tuple(
        t
        for t in _UNTIL_RETRACTED
        if t not in ("state_value_counts", "state_support", "state_counts", "state_passages")
    ),
    VALUE_COUNTS_LAYOUT: tuple(
        t for t in _UNTIL_RETRACTED if t not in ("state_support", "state_counts", "state_passages")
    ),
    SUPPORT_LAYOUT: tuple(
        t for t in _UNTIL_RETRACTED if t not in ("state_counts", "state_passages")
    ),
    COUNTS_LAYOUT: tuple(t for t in _UNTIL_RETRACTED if t != "state_passages"),
    PASSAGES_LAYOUT: _UNTIL_RETRACTED,
    RETRACTED_LAYOUT: tuple(STATE_TABLES),
}


def layout_of(conn: Sql) -> int:
    """The layout of the read model on ``conn`` (1: from before the mark was kept)."""
    row = conn.execute(
        "SELECT seq FROM projection_checkpoints WHERE name = ?", (LAYOUT_MARK,)
    ).fetchone()
    return int(row[0]) if row else 1


def layout_tables(layout: int) -> tuple[str, ...]:
    """The tables a read model of ``layout`` has: those of the last layout adding any."""
    return LAYOUT_TABLES[max(k for k in LAYOUT_TABLES if k <= layout)]


def ordered_selects(
    tables: Iterable[str], columns: Mapping[str, Sequence[str]] | None = None
) -> Iterator[str]:
    """A ``SELECT *`` of each of ``tables`` in primary-key order: two reads of equal tables
    give equal rows in the same order (of ``columns`` only, for a table it names; a node's
    of what it says, not its number and text where its row holds them: ``NODES_WITH_TEXT``)."""
    for table in tables:
        chosen = ", ".join((columns or {}).get(table, _SAID.get(table, ["*"])))
        yield f"SELECT {chosen} FROM {table} ORDER BY {', '.join(STATE_TABLES[table])}"


NODE_COLUMNS = (
    "identity, label, keys, properties, provenance, version, stub, remapped_from, "
    "created_seq, updated_seq, updated_at, updated_by, scope, resolution_keys, unsearchable"
)
_SAID = {"state_nodes": [c.strip() for c in NODE_COLUMNS.split(",")]}
REL_COLUMNS = (
    "identity, type, from_identity, to_identity, properties, provenance, version, "
    "remapped_from, created_seq, updated_seq, updated_at, updated_by"
)


def _upsert(table: str, columns: str) -> str:
    """Insert a row or replace the one with its identity (the same SQL on both databases)."""
    names = [c.strip() for c in columns.split(",")]
    updates = ", ".join(f"{c} = excluded.{c}" for c in names[1:])
    marks = ",".join("?" * len(names))
    return (
        f"INSERT INTO {table} ({columns}) VALUES ({marks}) "
        f"ON CONFLICT (identity) DO UPDATE SET {updates}"
    )


UPSERT_NODE = _upsert("state_nodes", NODE_COLUMNS)
UPSERT_NODE_TEXT = _upsert("state_nodes", f"{NODE_COLUMNS}, text")  # ``NODES_WITH_TEXT``
UPSERT_FACT = (
    "INSERT INTO state_facts (identity, property, seq, agent, provenance) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (identity, property) DO UPDATE SET "
    "seq = excluded.seq, agent = excluded.agent, provenance = excluded.provenance"
)
UPSERT_RELATIONSHIP = _upsert("state_relationships", REL_COLUMNS)
