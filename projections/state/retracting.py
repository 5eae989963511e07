"""A retraction in the read model (``language.retractions``): each fact put as its image says.

A ``source.retracted`` / ``source.unretracted`` event carries, per fact, the image it has
afterwards (``FactImage``: its row, who set each value, what supports it) or None (gone),
computed when the retraction was planned; applying it writes exactly that, so applying it
again, or replaying the log, leaves the same rows whatever the formula provider is by then.
What its planner asks of the read model is in ``retraction_queries``.
"""

from __future__ import annotations

from collections import Counter

from writegate.eventlog import canonical_json
from writegate.eventlog.sql import Sql, inserted
from writegate.language import (
    FactImage,
    RetractedFact,
    Retraction,
    SourceUnretracted,
)
from writegate.projections.state import (
    blocking,
    remembered,
    scoping,
    searchable,
    support,
    tallies,
    valuecounts,
)
from writegate.projections.state.tables import (
    UPSERT_FACT,
    UPSERT_NODE,
    UPSERT_NODE_TEXT,
    UPSERT_RELATIONSHIP,
)

_CHUNK = 500  # identities an IN (...) names


def _text(value: object) -> str:
    return canonical_json(value).decode()


def applied(conn: Sql, retraction: Retraction, *, texts: bool) -> None:
    """Each fact of the batch as its image after says; those gone (None) forgotten together,
    as deletions are, a few statements for the whole batch."""
    _taken_back(conn, retraction)
    gone: dict[str, list[str]] = {"node": [], "relationship": []}
    for fact in retraction.facts:
        if fact.after is None:
            gone[fact.kind].append(fact.identity)
            continue
        if fact.kind == "node":
            _put_node(conn, fact, fact.after, texts)
        else:
            _put_relationship(conn, fact, fact.after)
        _put_beside(conn, fact.identity, fact.after)
    for start in range(0, len(gone["relationship"]), _CHUNK):
        _relationships_gone(conn, gone["relationship"][start : start + _CHUNK])
    for start in range(0, len(gone["node"]), _CHUNK):
        _nodes_gone(conn, gone["node"][start : start + _CHUNK])


def _taken_back(conn: Sql, retraction: Retraction) -> None:
    """A retraction's first batch records the source and observations it took back (later
    writes naming them are refused); its undoing's first batch lets them go."""
    if retraction.batch != 1:
        return
    if isinstance(retraction, SourceUnretracted):
        conn.execute("DELETE FROM state_retracted WHERE retraction = ?", (retraction.retraction,))
        return
    taken = [("observation", o) for o in retraction.observations]
    if retraction.withdrawal.source is not None:
        taken.append(("source", retraction.withdrawal.source))
    for kind, name in taken:
        conn.execute(
            "INSERT INTO state_retracted (kind, name, retraction) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (kind, name, retraction.retraction),
        )


def _nodes_gone(conn: Sql, chunk: list[str]) -> None:
    marks = ",".join("?" * len(chunk))
    delta: Counter[tuple[str, str]] = Counter()
    for identity, label, stub, keys in conn.execute(
        "SELECT identity, label, stub, resolution_keys FROM state_nodes "
        f"WHERE identity IN ({marks})",
        chunk,
    ):
        delta[(tallies.LABEL, str(label))] -= 1
        if stub:
            delta[(tallies.STUBS, "")] -= 1
        if (old := blocking.stored_keys(keys)) is not None:
            valuecounts.rekey(conn, [], old)
            blocking.store_keys(conn, str(identity), old, None)
            remembered.index_changed(conn)
    tallies.moved(conn, delta)
    for identity in chunk:
        remembered.wrote_node(conn, identity, None)
    _rows_gone(conn, "state_nodes", chunk)


def _relationships_gone(conn: Sql, chunk: list[str]) -> None:
    marks = ",".join("?" * len(chunk))
    delta: Counter[tuple[str, str]] = Counter()
    for (kind,) in conn.execute(
        f"SELECT type FROM state_relationships WHERE identity IN ({marks})", chunk
    ):
        delta[(tallies.TYPE, str(kind))] -= 1
    tallies.moved(conn, delta)
    _rows_gone(conn, "state_relationships", chunk)


def _rows_gone(conn: Sql, table: str, chunk: list[str]) -> None:
    marks = ",".join("?" * len(chunk))
    for each in (table, "state_facts", "state_support"):
        conn.execute(f"DELETE FROM {each} WHERE identity IN ({marks})", chunk)


def _put_node(conn: Sql, fact: RetractedFact, image: FactImage, texts: bool) -> None:
    identity = fact.identity
    row = remembered.node_row(conn, identity)
    before = (str(row[remembered.LABEL]), bool(row[remembered.STUB])) if row else None
    label = image.label or ""
    tallies.node(conn, before, (label, image.stub))
    old = blocking.stored_keys(row[remembered.RESOLUTION_KEYS]) if row else None
    listed = _text(image.resolution_keys) if image.resolution_keys is not None else None
    hidden = searchable.listed(image.unsearchable, None)
    scope = image.scope or "default"
    written: remembered.NodeTuple = (
        identity,
        label,
        _text(image.keys or {}),
        _text(image.properties),
        _text(image.provenance),
        image.version,
        int(image.stub),
        image.remapped_from,
        image.created_seq,
        image.updated_seq,
        image.updated_at,
        image.updated_by,
        scope,
        listed,
        hidden,
    )
    if texts:
        text = searchable.text_of(label, image.properties, hidden)
        inserted(conn, UPSERT_NODE_TEXT, [(*written, text)])
        if row is not None and row[remembered.SCOPE] != scope:
            scoping.rescope(conn, identity)
    else:
        inserted(conn, UPSERT_NODE, [written])
    remembered.wrote_node(conn, identity, written)
    valuecounts.rekey(conn, image.resolution_keys or [], old or [])
    blocking.store_keys(conn, identity, old, image.resolution_keys)
    remembered.index_changed(conn)


def _put_relationship(conn: Sql, fact: RetractedFact, image: FactImage) -> None:
    row = conn.execute(
        "SELECT type FROM state_relationships WHERE identity = ?", (fact.identity,)
    ).fetchone()
    tallies.relationship(conn, str(row[0]) if row else None, image.type)
    conn.execute(
        UPSERT_RELATIONSHIP,
        (
            fact.identity,
            image.type,
            image.from_identity,
            image.to_identity,
            _text(image.properties),
            _text(image.provenance),
            image.version,
            image.remapped_from,
            image.created_seq,
            image.updated_seq,
            image.updated_at,
            image.updated_by,
        ),
    )


def _put_beside(conn: Sql, identity: str, image: FactImage) -> None:
    """Who set each value, and the supports, as the image says."""
    conn.execute("DELETE FROM state_facts WHERE identity = ?", (identity,))
    facts = [
        (
            identity,
            f.property,
            f.seq,
            f.agent,
            _text(image.provenance if f.seq == image.updated_seq else f.provenance),
        )
        for f in image.facts
    ]
    if facts:
        inserted(conn, UPSERT_FACT, facts)
    support.forget(conn, identity)
    for s in image.support:
        support.put(
            conn,
            (
                identity,
                s.seq,
                s.kind,
                s.version,
                s.agent,
                s.source,
                s.method,
                s.reliability,
                s.confidence,
                s.corroborated,
                _text(s.observations),
                s.valid_from,
                s.valid_to,
                s.occurred_at,
            ),
        )
