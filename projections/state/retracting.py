"""A retraction in the read model (``language.retractions``): each fact put as its image says.

A ``source.retracted`` / ``source.unretracted`` event carries, per fact, the image it has
afterwards (``FactImage``: its row, who set each value, what supports it) or None (gone),
computed when the retraction was planned; applying it writes exactly that, so applying it
again, or replaying the log, leaves the same rows whatever the formula provider is by then.
Also what a retraction's planner asks of the read model: which facts a withdrawal's
supports hold up, each fact's image now, a node's relationships, the merges recorded and
the observations a source gave.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import orjson

from writegate.eventlog import canonical_json
from writegate.eventlog.sql import Sql, inserted
from writegate.language import (
    FactImage,
    RetractedFact,
    Retraction,
    SetBy,
    SupportRecord,
    Withdrawal,
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
    NODE_COLUMNS,
    REL_COLUMNS,
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


# -- what the planner asks ----------------------------------------------------------------


def _where(withdrawal: Withdrawal) -> tuple[str, list[object]]:
    """The supports ``withdrawal`` names, as SQL over ``state_support``."""
    clauses: list[str] = []
    params: list[object] = []
    for column, value in (
        ("source", withdrawal.source),
        ("agent", withdrawal.agent),
        ("method", withdrawal.method),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if withdrawal.observation is not None:  # the observation or a passage of it
        clauses.append("(observations LIKE ? OR observations LIKE ?)")
        params += [f'%"{withdrawal.observation}"%', f'%"{withdrawal.observation}#%']
    if withdrawal.since is not None:
        clauses.append("occurred_at >= ?")
        params.append(withdrawal.since)
    if withdrawal.until is not None:
        clauses.append("occurred_at < ?")
        params.append(withdrawal.until)
    return " AND ".join(clauses) or "1 = 1", params


class RetractionQueries:
    """What a retraction's planner asks of the read model."""

    def withdrawn_facts(
        self, conn: Sql, withdrawal: Withdrawal, after: str, limit: int
    ) -> list[str]:
        """The next ``limit`` facts, in identity order after ``after``, whose current
        version a support ``withdrawal`` names holds up."""
        where, params = _where(withdrawal)
        rows = conn.execute(
            f"SELECT DISTINCT identity FROM state_support WHERE identity > ? AND {where} "
            "ORDER BY identity LIMIT ?",
            (after, *params, limit),
        )
        return [str(row[0]) for row in rows]

    def fact_image(self, conn: Sql, identity: str) -> tuple[str, FactImage] | None:
        """A fact's kind (``node`` / ``relationship``) and image now; None: not held."""
        return self.fact_images(conn, [identity]).get(identity)

    def fact_images(self, conn: Sql, identities: Sequence[str]) -> dict[str, tuple[str, FactImage]]:
        """``fact_image`` of each of ``identities`` held, a few statements a chunk of them."""
        found: dict[str, tuple[str, FactImage]] = {}
        for start in range(0, len(identities), _CHUNK):
            found.update(_images(conn, list(identities[start : start + _CHUNK])))
        return found

    def touching(self, conn: Sql, nodes: Sequence[str]) -> dict[str, set[str]]:
        """The identities of the relationships from or to each of ``nodes`` that has any."""
        found: dict[str, set[str]] = {}
        for start in range(0, len(nodes), _CHUNK):
            chunk = list(nodes[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            for end in ("from_identity", "to_identity"):
                for node, rel in conn.execute(
                    f"SELECT {end}, identity FROM state_relationships WHERE {end} IN ({marks})",
                    chunk,
                ):
                    found.setdefault(str(node), set()).add(str(rel))
        return found

    def recorded_merges(self, conn: Sql) -> list[str]:
        """The ids of the merges standing (not undone), oldest alias first."""
        rows = conn.execute("SELECT DISTINCT merge FROM state_aliases ORDER BY merge")
        return [str(row[0]) for row in rows]

    def observations_given(self, conn: Sql, withdrawal: Withdrawal) -> list[str]:
        """The observations recorded from the source, by the agent and method named (the
        window by when they were recorded); the one named, if the log holds it."""
        clauses, params = [], []
        for column, value in (
            ("source", withdrawal.source),
            ("agent", withdrawal.agent),
            ("method", withdrawal.method),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if withdrawal.observation is not None:
            clauses.append("id = ?")
            params.append(withdrawal.observation)
        if not clauses:
            return []
        if withdrawal.since is not None:
            clauses.append("recorded_at >= ?")
            params.append(withdrawal.since)
        if withdrawal.until is not None:
            clauses.append("recorded_at < ?")
            params.append(withdrawal.until)
        rows = conn.execute(
            f"SELECT id FROM state_observations WHERE {' AND '.join(clauses)} ORDER BY id",
            params,
        )
        return [str(row[0]) for row in rows]


def _images(conn: Sql, chunk: list[str]) -> dict[str, tuple[str, FactImage]]:
    marks = ",".join("?" * len(chunk))
    facts: dict[str, list[tuple[str, int, str, str]]] = {}
    for r in conn.execute(
        "SELECT identity, property, seq, agent, provenance FROM state_facts "
        f"WHERE identity IN ({marks}) ORDER BY identity, property",
        chunk,
    ):
        facts.setdefault(str(r[0]), []).append((str(r[1]), int(r[2]), str(r[3]), str(r[4])))
    supports: dict[str, list[SupportRecord]] = {}
    for r in conn.execute(
        f"SELECT {support.COLUMNS} FROM state_support WHERE identity IN ({marks}) "
        "ORDER BY identity, seq",
        chunk,
    ):
        supports.setdefault(str(r[0]), []).append(
            SupportRecord(
                seq=int(r[1]),
                kind=str(r[2]),
                version=int(r[3]),
                agent=str(r[4]),
                source=str(r[5]),
                method=str(r[6]),
                reliability=float(r[7]),
                confidence=float(r[8]),
                corroborated=float(r[9]),
                observations=orjson.loads(str(r[10])),
                valid_from=r[11],
                valid_to=r[12],
                occurred_at=str(r[13]),
            )
        )
    found: dict[str, tuple[str, FactImage]] = {}
    for node in conn.execute(
        f"SELECT {NODE_COLUMNS} FROM state_nodes WHERE identity IN ({marks})", chunk
    ):
        identity = str(node[0])
        found[identity] = (
            "node",
            FactImage(
                label=str(node[1]),
                keys=orjson.loads(node[2]),
                properties=orjson.loads(node[3]),
                provenance=orjson.loads(node[4]),
                version=int(node[5]),
                stub=bool(node[6]),
                remapped_from=node[7],
                created_seq=int(node[8]),
                updated_seq=int(node[9]),
                updated_at=str(node[10]),
                updated_by=str(node[11]),
                scope=str(node[12]),
                resolution_keys=blocking.stored_keys(node[13]),
                unsearchable=orjson.loads(node[14]) if node[14] is not None else None,
                facts=_set_by(facts.get(identity, []), int(node[9])),
                support=supports.get(identity, []),
            ),
        )
    for rel in conn.execute(
        f"SELECT {REL_COLUMNS} FROM state_relationships WHERE identity IN ({marks})", chunk
    ):
        identity = str(rel[0])
        found[identity] = (
            "relationship",
            FactImage(
                type=str(rel[1]),
                from_identity=str(rel[2]),
                to_identity=str(rel[3]),
                properties=orjson.loads(rel[4]),
                provenance=orjson.loads(rel[5]),
                version=int(rel[6]),
                remapped_from=rel[7],
                created_seq=int(rel[8]),
                updated_seq=int(rel[9]),
                updated_at=str(rel[10]),
                updated_by=str(rel[11]),
                facts=_set_by(facts.get(identity, []), int(rel[9])),
                support=supports.get(identity, []),
            ),
        )
    return found


def _set_by(rows: list[tuple[str, int, str, str]], updated: int) -> list[SetBy]:
    """Who set each value, the fact's last write's provenance left unsaid (``SetBy``)."""
    return [
        SetBy(
            property=p,
            seq=seq,
            agent=agent,
            provenance=None if seq == updated else orjson.loads(provenance),
        )
        for p, seq, agent, provenance in rows
    ]
