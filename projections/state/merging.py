"""How a merge and its undoing change the state tables beyond their graph events: the alias
(the duplicate's identity, resolving to the survivor) and who set each value carried or
restored — a value keeps its writer through a merge, not the merger."""

from __future__ import annotations

from writegate.eventlog import canonical_json
from writegate.eventlog.sql import Sql
from writegate.language import FactRecord, NodesMerged, NodesUnmerged
from writegate.projections.state import remembered
from writegate.projections.state.tables import UPSERT_FACT


def _record(conn: Sql, facts: list[FactRecord]) -> None:
    conn.executemany(
        UPSERT_FACT,
        [
            (f.identity, f.property, f.seq, f.agent, canonical_json(f.provenance).decode())
            for f in facts
        ],
    )


def merged(conn: Sql, merge: NodesMerged) -> None:
    survivor = merge.survivor.identity
    remembered.forget(conn)  # aliases move
    for alias in merge.aliases:  # what resolved to the duplicate resolves on, to the survivor
        conn.execute("UPDATE state_aliases SET identity = ? WHERE alias = ?", (survivor, alias))
    conn.execute(
        "INSERT INTO state_aliases (alias, identity, merge) VALUES (?, ?, ?) "
        "ON CONFLICT (alias) DO UPDATE SET identity = excluded.identity, merge = excluded.merge",
        (merge.merged.identity, survivor, merge.merge),
    )
    _record(conn, merge.carried)


def unmerged(conn: Sql, unmerge: NodesUnmerged) -> None:
    restored = unmerge.restored.identity
    remembered.forget(conn)
    conn.execute("DELETE FROM state_aliases WHERE alias = ?", (restored,))
    for alias in unmerge.aliases:
        conn.execute("UPDATE state_aliases SET identity = ? WHERE alias = ?", (restored, alias))
    _record(conn, unmerge.facts)
