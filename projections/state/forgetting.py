"""A forgotten subject's rows in the read model and its text index, made again without it.

Run inside the forgetting's write transaction (``Log.forget``'s ``also``), once the subject's
sealed values are destroyed, on a connection that overwrites what it deletes (SQLite's
``secure_delete``): the node's rows and those of the relationships touching it are deleted
and their streams' events applied again as the log now reads them (each personal value
``null``), so the read model is what a replay makes of the log; the text index is compacted
so the forgotten words leave its own structures too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from writegate.eventlog.events import EventCore
from writegate.eventlog.sql import Sql
from writegate.language import (
    PSEUDONYM,
    merge_stream,
    node_stream,
    observation_stream,
    relationship_stream,
)
from writegate.projections.search import text_index_for
from writegate.projections.state import (
    blocking,
    passages,
    remembered,
    searchable,
    tallies,
    valuecounts,
)

# (table, column naming an entity): the rows its own stream's events make
_BY_ENTITY = (
    ("state_facts", "identity"),
    ("state_support", "identity"),
    ("state_resolution_keys", "identity"),
    ("state_aliases", "identity"),
    ("state_citations", "identity"),
    ("state_relationships", "identity"),
    ("state_nodes", "identity"),
)
Replay = Callable[[Sequence[str]], Iterable[EventCore]]  # the events of some streams, in order


def forget_nodes(
    conn: Sql, identities: Sequence[str], replay: Replay, apply: Callable[[EventCore], None]
) -> dict[str, int]:
    """Delete the nodes ``identities`` name, the relationships touching them and every row
    of theirs, then ``apply`` their streams' events again (``replay``); the rows deleted per
    table, and the text index's documents of them."""
    relationships: list[str] = []
    for identity in identities:
        rows = conn.execute(
            "SELECT identity FROM state_relationships WHERE from_identity = ? OR to_identity = ?",
            (identity, identity),
        ).fetchall()
        relationships += [str(r[0]) for r in rows if str(r[0]) not in relationships]
    gone = [*identities, *relationships]
    merges = [  # what made a duplicate an alias of one of them: applied again, as a replay would
        merge_stream(str(row[0]))
        for row in _column(conn, "SELECT merge FROM state_aliases WHERE identity = ?", identities)
    ]
    for rtype in _column(conn, "SELECT type FROM state_relationships WHERE identity = ?", gone):
        tallies.relationship(conn, str(rtype[0]), None)  # applied again, counted again
    for row in _column(conn, "SELECT label, stub FROM state_nodes WHERE identity = ?", gone):
        tallies.node(conn, (str(row[0]), bool(row[1])), None)
    listed: dict[str, list[str]] = {}  # each node's resolution keys, as its row lists them
    for identity in identities:  # and its values counted as evidence (keyed by the value)
        for (text,) in _column(conn, _KEYS_LISTED, [identity]):
            listed[identity] = blocking.stored_keys(str(text) if text else None) or []
            valuecounts.rekey(conn, [], listed[identity])
    hidden = searchable.listing(conn, identities)
    counts: dict[str, int] = {}
    for table, column in _BY_ENTITY:
        for name in gone:
            if table == "state_resolution_keys":  # by their keys: no index by node
                found = sum(_deleted(conn, _KEY_ROW, (key, name)) for key in listed.get(name, []))
            else:
                found = _deleted(conn, f"DELETE FROM {table} WHERE {column} = ?", (name,))
            counts[table] = counts.get(table, 0) + found
    index = text_index_for(conn)
    counts["search_documents"] = len(index.documents_of(conn, gone))
    index.drop(conn, gone)
    streams = [*map(node_stream, identities), *map(relationship_stream, relationships)]
    # a relationship write that made one of them as a stub is on its stream too: what
    # became of that relationship since (a deletion) is on the relationship's own stream
    streams += sorted(
        {
            stream
            for event in replay(streams[: len(identities)])
            for stream in event.streams
            if stream.startswith("rel:") and stream not in streams
        }
    )
    remembered.forget(conn)  # the rows deleted here are asked again
    for event in replay([*streams, *sorted(set(merges))]):
        apply(event)
    searchable.relist(conn, index, hidden)
    index.compact(conn)
    return {table: count for table, count in counts.items() if count}


_KEYS_LISTED = "SELECT resolution_keys FROM state_nodes WHERE identity = ?"
_KEY_ROW = "DELETE FROM state_resolution_keys WHERE key = ? AND identity = ?"


def _deleted(conn: Sql, sql: str, args: tuple[str, ...]) -> int:
    return max(conn.execute(sql, args).rowcount, 0)


def _column(conn: Sql, sql: str, names: Sequence[str]) -> list[tuple[object, ...]]:
    """The rows ``sql`` finds for each of ``names``."""
    return [tuple(row) for name in names for row in conn.execute(sql, (name,)).fetchall()]


def forget_observations(
    conn: Sql, ids: Sequence[str], replay: Replay, apply: Callable[[EventCore], None]
) -> dict[str, int]:
    """Delete the observations ``ids`` (their citations stay: they are the citing writes'),
    a document's passages and their text index documents, then ``apply`` their events
    again (the text now "", so a document has no passages left)."""
    cut = passages.forget(conn, ids)  # a document's passages, each a document of the index
    counts = {"state_observations": 0, "state_passages": len(cut)}
    for observation in ids:
        found = conn.execute("DELETE FROM state_observations WHERE id = ?", (observation,))
        counts["state_observations"] += max(found.rowcount, 0)
    index = text_index_for(conn)
    index.drop(conn, [*ids, *cut])
    for event in replay([observation_stream(o) for o in ids]):
        apply(event)
    index.compact(conn)
    return {table: count for table, count in counts.items() if count}


def forget_located(
    conn: Sql,
    located: Sequence[tuple[str, str]],
    replay: Replay,
    apply: Callable[[EventCore], None],
) -> dict[str, int]:
    """The rows of forgotten subjects by (subject id, locator): a personal node (its locator
    its clear identity, its rows named by its pseudonym) or a sealed observation (its id)."""
    nodes = [
        f"{loc.partition('{')[0]}{PSEUDONYM}{subject}" for subject, loc in located if "{" in loc
    ]
    observations = [loc for _, loc in located if "{" not in loc]
    counts = forget_nodes(conn, nodes, replay, apply) if nodes else {}
    if observations:
        for table, count in forget_observations(conn, observations, replay, apply).items():
            counts[table] = counts.get(table, 0) + count
    return counts


__all__ = ["Replay", "forget_located", "forget_nodes", "forget_observations"]
