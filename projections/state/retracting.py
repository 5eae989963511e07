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

from collections.abc import Callable

import orjson

from writegate.eventlog import canonical_json
from writegate.eventlog.sql import Sql, inserted
from writegate.language import (
    FactImage,
    FactRecord,
    RetractedFact,
    Retraction,
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

Forget = Callable[[Sql, str, str], None]  # (conn, table, identity): ``changes._forget``


def _text(value: object) -> str:
    return canonical_json(value).decode()


def applied(conn: Sql, retraction: Retraction, *, texts: bool, forget: Forget) -> None:
    """Each fact of the batch as its image after says (None: forgotten, as a deletion)."""
    for fact in retraction.facts:
        if fact.after is None:
            table = "state_nodes" if fact.kind == "node" else "state_relationships"
            forget(conn, table, fact.identity)
        elif fact.kind == "node":
            _put_node(conn, fact, fact.after, texts)
        else:
            _put_relationship(conn, fact, fact.after)
        if fact.after is not None:
            _put_beside(conn, fact.identity, fact.after)


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
    facts = [(identity, f.property, f.seq, f.agent, _text(f.provenance)) for f in image.facts]
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
        facts = [
            FactRecord(
                identity=identity,
                property=str(r[0]),
                seq=int(r[1]),
                agent=str(r[2]),
                provenance=orjson.loads(str(r[3])),
            )
            for r in conn.execute(
                "SELECT property, seq, agent, provenance FROM state_facts WHERE identity = ? "
                "ORDER BY property",
                (identity,),
            )
        ]
        supports = [
            SupportRecord(
                seq=s.seq,
                kind=s.kind,
                version=s.version,
                agent=s.agent,
                source=s.source,
                method=s.method,
                reliability=s.reliability,
                confidence=s.confidence,
                corroborated=s.corroborated,
                observations=s.observations,
                valid_from=s.valid_from,
                valid_to=s.valid_to,
                occurred_at=s.occurred_at,
            )
            for s in support.SupportQueries().support(conn, identity)
        ]
        node = conn.execute(
            f"SELECT {NODE_COLUMNS} FROM state_nodes WHERE identity = ?", (identity,)
        ).fetchone()
        if node is not None:
            return "node", FactImage(
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
                facts=facts,
                support=supports,
            )
        rel = conn.execute(
            f"SELECT {REL_COLUMNS} FROM state_relationships WHERE identity = ?", (identity,)
        ).fetchone()
        if rel is None:
            return None
        return "relationship", FactImage(
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
            facts=facts,
            support=supports,
        )

    def touching(self, conn: Sql, identity: str) -> list[str]:
        """The identities of the relationships from or to a node."""
        rows = conn.execute(
            "SELECT identity FROM state_relationships WHERE from_identity = ? "
            "UNION SELECT identity FROM state_relationships WHERE to_identity = ?",
            (identity, identity),
        )
        return sorted(str(row[0]) for row in rows)

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
