"""The state read model as one caller may see it: every read question with the caller's
scopes in its SQL (``ScopedState``), so what lies outside them is never read, let alone
returned. A node is seen when its scope is visible, a relationship when both ends are; a
read model without scopes (a read-only copy of an older layout) shows a scoped caller
nothing. ``withheld`` counts, per scope, the relationships leading from given nodes into
scopes the caller cannot see — the one thing said about them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from writegate.eventlog.sql import Sql
from writegate.language.scopes import Visible
from writegate.projections.search import Hit, TextIndex
from writegate.projections.search.contract import in_scopes
from writegate.projections.state.observations import MAX_CITATIONS, CitationRow, ObservationRow
from writegate.projections.state.projection import StateProjection
from writegate.projections.state.queries import (
    _EDGE_READ,
    EdgeRow,
    StateCounts,
    _edge,
)
from writegate.projections.state.tables import OBSERVATION_SCOPES_LAYOUT, SCOPES_LAYOUT
from writegate.projections.state.walk import (
    Attached,
    Step,
    edges_around,
    links_step,
    relationships_counted,
)

_CHUNK = 400
_ENDS = (
    "JOIN state_nodes f ON f.identity = r.from_identity "
    "JOIN state_nodes t ON t.identity = r.to_identity"
)
_EDGE_COLUMNS = ", ".join(f"r.{c.strip()}" for c in _EDGE_READ.split(","))


class ScopedIndex:
    """A text index whose every search keeps to the caller's scopes."""

    def __init__(self, index: TextIndex, visible: frozenset[str]) -> None:
        self._index = index
        self._visible = visible

    def search(
        self,
        conn: Sql,
        query: str,
        kind: str,
        limit: int,
        after: str | None = None,
        visible: Visible = None,
    ) -> list[Hit]:
        narrowed = self._visible if visible is None else self._visible & visible
        return self._index.search(conn, query, kind, limit, after, narrowed)

    def matched(
        self, conn: Sql, query: str, kind: str, identities: Sequence[str]
    ) -> dict[str, list[str]]:
        """Why each of ``identities`` was found: asked of documents the caller was given."""
        return self._index.matched(conn, query, kind, identities)


class ScopedState(StateProjection):
    """``StateProjection``'s reads for a caller who sees ``visible`` (never used to write)."""

    def __init__(self, visible: frozenset[str]) -> None:
        self.visible = visible

    def _blind(self, conn: Sql) -> bool:
        """Nothing can be filtered: the read model keeps no scopes (fail closed)."""
        return self.layout(conn) < SCOPES_LAYOUT or not self.visible

    def _nodes_in(self, alias: str) -> tuple[str, list[str]]:
        return in_scopes([f"{alias}.scope"], self.visible)

    def _ends(self) -> tuple[str, list[str]]:
        return in_scopes(["f.scope", "t.scope"], self.visible)

    def visible_identities(self, conn: Sql, identities: Iterable[str]) -> list[str]:
        """Those of ``identities`` that are nodes the caller may see, in their order."""
        wanted = list(dict.fromkeys(identities))
        if self._blind(conn) or not wanted:
            return []
        seen: set[str] = set()
        scoped, scopes = self._nodes_in("n")
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT n.identity FROM state_nodes n WHERE n.identity IN ({marks}){scoped}"
            seen.update(row[0] for row in conn.execute(sql, [*chunk, *scopes]))
        return [i for i in wanted if i in seen]

    def node_exists(self, conn: Sql, identity: str) -> bool:
        return bool(self.visible_identities(conn, [identity]))

    def node(self, conn: Sql, identity: str) -> Any:
        return super().node(conn, identity) if self.node_exists(conn, identity) else None

    def nodes(self, conn: Sql, identities: Iterable[str]) -> list[Any]:
        return super().nodes(conn, self.visible_identities(conn, identities))

    def relationship(self, conn: Sql, identity: str) -> EdgeRow | None:
        if self._blind(conn):
            return None
        scoped, scopes = self._ends()
        row = conn.execute(
            f"SELECT {_EDGE_COLUMNS} FROM state_relationships r {_ENDS} "
            f"WHERE r.identity = ?{scoped}",
            [identity, *scopes],
        ).fetchone()
        return _edge(row) if row is not None else None

    def relationship_exists(self, conn: Sql, identity: str) -> bool:
        return self.relationship(conn, identity) is not None

    def _touching(
        self, conn: Sql, column: str, identity: str, rtype: str | None, limit: int, what: str
    ) -> list[Any]:
        if self._blind(conn):
            return []
        scoped, scopes = self._ends()
        typed = " AND r.type = ?" if rtype else ""
        sql = (
            f"SELECT {what} FROM state_relationships r {_ENDS} WHERE r.{column} = ?{typed}"
            f"{scoped} ORDER BY r.identity LIMIT ?"
        )
        return conn.execute(sql, [identity, *([rtype] if rtype else []), *scopes, limit]).fetchall()

    def edges_touching(
        self,
        conn: Sql,
        identities: Iterable[str],
        relationship_type: str | None,
        cap: int,
        each: int | None = None,
    ) -> tuple[list[EdgeRow], bool]:
        if self._blind(conn):
            return [], False
        scoped, scopes = self._ends()
        found, more = edges_around(
            conn,
            list(identities),
            relationship_type,
            cap,
            _EDGE_READ,
            ends=f" {_ENDS}",
            scoped=scoped,
            scopes=scopes,
            each=each,
        )
        return [_edge(row) for row in found], more

    def relationships_counted(self, conn: Sql, identities: Sequence[str]) -> dict[str, int]:
        """Only those inside the grant (the rest are ``withheld``)."""
        if self._blind(conn):
            return dict.fromkeys(identities, 0)
        scoped, scopes = self._ends()
        return relationships_counted(
            conn, identities, ends=f" {_ENDS}", scoped=scoped, scopes=scopes
        )

    def relationships_of(self, conn: Sql, identity: str) -> list[Attached]:
        what = "r.identity, r.type, r.from_identity, r.to_identity"
        found = {
            row[0]: Attached(*row)
            for column in ("from_identity", "to_identity")
            for row in self._touching(conn, column, identity, None, 1_000_000, what)
        }
        return [found[k] for k in sorted(found)]

    def links_touching(
        self, conn: Sql, identities: Sequence[str], relationship_type: str | None, cap: int
    ) -> Step:
        if self._blind(conn):
            return {identity: [] for identity in identities}, False
        scoped, scopes = self._ends()
        return links_step(
            conn, identities, relationship_type, cap, ends=f" {_ENDS}", scoped=scoped, scopes=scopes
        )

    def search(self, conn: Sql, text: str, after: str, limit: int) -> list[str]:
        """Every node the caller sees, in identity order (``""``, the whole graph's
        question); the old substring search of anything else (a read model before the
        text index) keeps no scopes, so it finds nothing."""
        if text or self._blind(conn):
            return []
        scoped, scopes = self._nodes_in("n")
        sql = (
            f"SELECT n.identity FROM state_nodes n WHERE n.identity > ?{scoped} "
            "ORDER BY n.identity LIMIT ?"
        )
        return [row[0] for row in conn.execute(sql, [after, *scopes, limit])]

    def text_index(self, conn: Sql) -> Any:
        return ScopedIndex(
            super().text_index(conn), self.visible if not self._blind(conn) else frozenset()
        )

    # -- observations: seen in their scope; a citation when its fact is ---------------------

    def _sees_observations(self, conn: Sql) -> frozenset[str]:
        """The grant, or none where the read model keeps no observation's scope."""
        return self.visible if self.layout(conn) >= OBSERVATION_SCOPES_LAYOUT else frozenset()

    def observation(
        self, conn: Sql, observation: str, visible: Visible = None
    ) -> ObservationRow | None:
        return super().observation(conn, observation, self._sees_observations(conn))

    def observations(
        self, conn: Sql, ids: Iterable[str], visible: Visible = None
    ) -> list[ObservationRow]:
        return super().observations(conn, ids, self._sees_observations(conn))

    def citing(
        self, conn: Sql, observation: str, limit: int = MAX_CITATIONS, visible: Visible = None
    ) -> list[CitationRow]:
        return super().citing(conn, observation, limit, self._sees_observations(conn))

    def beside(
        self, conn: Sql, found: Sequence[ObservationRow], reach: int, visible: Visible = None
    ) -> dict[str, list[tuple[int, ObservationRow]]]:
        return super().beside(conn, found, reach, self._sees_observations(conn))

    def counts(self, conn: Sql) -> StateCounts:
        if self._blind(conn):
            return StateCounts({}, {}, 0)
        nodes, scopes = self._nodes_in("n")
        where = f"WHERE 1 = 1{nodes}"
        labels = dict(
            conn.execute(
                f"SELECT n.label, count(*) FROM state_nodes n {where} GROUP BY n.label "
                "ORDER BY n.label",
                scopes,
            )
        )
        ends, end_scopes = self._ends()
        types = dict(
            conn.execute(
                f"SELECT r.type, count(*) FROM state_relationships r {_ENDS} WHERE 1 = 1{ends} "
                "GROUP BY r.type ORDER BY r.type",
                end_scopes,
            )
        )
        stubs = conn.execute(
            f"SELECT count(*) FROM state_nodes n {where} AND n.stub <> 0", scopes
        ).fetchone()[0]
        return StateCounts(labels, types, int(stubs))

    def withheld(
        self, conn: Sql, identities: Sequence[str], relationship_type: str | None = None
    ) -> dict[str, int]:
        """Per scope the caller cannot see, how many relationships (of one type, if given)
        lead from ``identities`` to a node in it; nothing else about them."""
        if self._blind(conn) or not identities:
            return {}
        ordered = sorted(self.visible)
        hidden = f"o.scope NOT IN ({','.join('?' * len(ordered))})"
        typed = " AND r.type = ?" if relationship_type else ""
        counts: dict[str, int] = {}
        for here, there in (("from_identity", "to_identity"), ("to_identity", "from_identity")):
            for start in range(0, len(identities), _CHUNK):
                chunk = list(identities[start : start + _CHUNK])
                marks = ",".join("?" * len(chunk))
                sql = (
                    "SELECT o.scope, count(*) FROM state_relationships r JOIN state_nodes o "
                    f"ON o.identity = r.{there} WHERE r.{here} IN ({marks}){typed} AND {hidden} "
                    "GROUP BY o.scope"
                )
                params = [*chunk, *([relationship_type] if relationship_type else []), *ordered]
                for scope, count in conn.execute(sql, params):
                    counts[scope] = counts.get(scope, 0) + int(count)
        return dict(sorted(counts.items()))
