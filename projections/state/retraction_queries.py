"""What a retraction's planner asks of the read model (``projections.state.retracting``
puts its images in place): which facts a withdrawal's supports hold up, each fact's image
now, the relationships of nodes, the merges standing, the observations a source gave.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from writegate.eventlog.sql import Sql
from writegate.language import FactImage, SetBy, SupportRecord, Withdrawal
from writegate.projections.state import blocking, remembered, support
from writegate.projections.state.tables import (
    NODE_COLUMNS,
    REL_COLUMNS,
    RETRACTED_LAYOUT,
    layout_of,
)

_CHUNK = 500  # identities an IN (...) names


def _named(withdrawal: Withdrawal) -> tuple[list[str], list[object]]:
    """The source, agent and method ``withdrawal`` names, as SQL equalities (columns of
    ``state_support`` and ``state_observations`` alike)."""
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
    return clauses, params


def _where(withdrawal: Withdrawal) -> tuple[str, list[object]]:
    """The supports ``withdrawal`` names, as SQL over ``state_support``."""
    clauses, params = _named(withdrawal)
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

    def retracted(self, conn: Sql, kind: str, names: Sequence[str]) -> dict[str, str]:
        """Which of ``names`` (sources or observations, by ``kind``) a standing retraction
        took back, and the first such retraction's id (a probe of a key each, unless an
        append read them ahead; a read model of a layout before retractions: none — an
        append's is always of the current layout)."""
        if not names:
            return {}
        if (ahead := remembered.taken_back(conn, kind, names)) is not None:
            return {name: taken for name, taken in ahead.items() if taken is not None}
        if remembered.seen(conn) is None and layout_of(conn) < RETRACTED_LAYOUT:
            return {}
        marks = ",".join("?" * len(names))
        rows = conn.execute(
            "SELECT name, MIN(retraction) FROM state_retracted "
            f"WHERE kind = ? AND name IN ({marks}) GROUP BY name",
            (kind, *names),
        )
        return {str(name): str(retraction) for name, retraction in rows}

    def recorded_merges(self, conn: Sql) -> list[str]:
        """The ids of the merges standing (not undone), oldest alias first."""
        rows = conn.execute("SELECT DISTINCT merge FROM state_aliases ORDER BY merge")
        return [str(row[0]) for row in rows]

    def observations_given(self, conn: Sql, withdrawal: Withdrawal) -> list[str]:
        """The observations recorded from the source, by the agent and method named (the
        window by when they were recorded); the one named, if the log holds it."""
        clauses, params = _named(withdrawal)
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
