"""Observations in the read model: the texts agents kept, and the writes that cited them.

``state_observations`` holds each observation once (its first recording: a repeat appends
nothing); ``state_citations`` holds one row per write that cited one, by the fact it wrote
and the write's seq, so a reader goes from an observation to the facts extracted from it
(``citing``) and from a fact to the observations behind it (``cited_by``). A citation
outlives the fact's deletion (``CitationRow.standing`` says whether the fact stands): where
a write came from stays said. The text index gets each observation's text, as documents
of kind ``observation`` (``projection``); a document's, passage by passage (``passages``):
a passage id (``<id>#<start>``) is asked as any observation's and answers the passage's
text with its document's provenance.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any, Literal

from writegate.eventlog import EventCore
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sql import Sql
from writegate.language import (
    ObservationRecorded,
    cited_observations,
    provenance_of,
    scope_or_default,
)
from writegate.language.observations import passage_of
from writegate.language.scopes import Visible
from writegate.projections.search.contract import in_scopes
from writegate.projections.state import passages
from writegate.projections.state.tables import PASSAGES_LAYOUT, layout_of

CitingKind = Literal["node", "relationship"]
MAX_CITATIONS = 1000  # rows one question returns at most (the most recent are the last)
_CHUNK = 500  # ids per IN (...) lookup


@dataclass(frozen=True)
class ObservationRow:
    """One kept observation: what was said, from where, by whom, when."""

    id: str
    text: str
    source: str
    method: str  # the extraction method declared
    reliability: float
    confidence: float  # computed, as for any write
    agent: str  # who recorded it
    session: str | None  # the writer's label for the conversation, else the actor's session
    said_at: str  # when it was said or valid (the recording's time when the writer gave none)
    recorded_at: str
    seq: int  # the event that recorded it


@dataclass(frozen=True)
class CitationRow:
    """One write citing one observation: the fact it wrote, and whether that fact stands."""

    observation: str
    identity: str  # the node's or relationship's
    kind: CitingKind
    seq: int  # the citing write
    standing: bool  # the node or relationship exists now


_OBSERVATION_COLUMNS = ", ".join(f.name for f in fields(ObservationRow))
_UPSERT = (  # applied again (at-least-once): as it was
    f"INSERT INTO state_observations ({_OBSERVATION_COLUMNS}, scope) "
    f"VALUES ({', '.join('?' * (len(fields(ObservationRow)) + 1))}) ON CONFLICT DO NOTHING"
)
# a passage: its document's row with its slice of the text
_PASSAGE_COLUMNS = ", ".join(
    {"text": passages.SLICE}.get(f.name, f"o.{f.name}") for f in fields(ObservationRow)
)
_PASSAGE = (
    f"SELECT {_PASSAGE_COLUMNS} FROM state_passages p "
    "JOIN state_observations o ON o.id = p.observation WHERE p.observation = ? AND p.start = ?"
)
_CITE = (
    "INSERT INTO state_citations (observation, identity, kind, seq) VALUES (?, ?, ?, ?) "
    "ON CONFLICT DO NOTHING"
)
_CITATIONS = (
    "SELECT c.observation, c.identity, c.kind, c.seq, "
    "CASE WHEN n.identity IS NULL AND r.identity IS NULL THEN 0 ELSE 1 END "
    "FROM state_citations c "
    "LEFT JOIN state_nodes n ON c.kind = 'node' AND n.identity = c.identity "
    "LEFT JOIN state_relationships r ON c.kind = 'relationship' AND r.identity = c.identity "
)
# a scoped question's citations: only facts that stand, each end of a relationship visible
_SCOPED_ENDS = (
    "LEFT JOIN state_nodes rf ON rf.identity = r.from_identity "
    "LEFT JOIN state_nodes rt ON rt.identity = r.to_identity "
)


def _seen(visible: Visible) -> tuple[str, list[str]]:
    """The condition keeping a citation's fact inside ``visible`` (nothing: every scope)."""
    if visible is None:
        return "", []
    node, nodes = in_scopes(["n.scope"], visible)
    ends, both = in_scopes(["rf.scope", "rt.scope"], visible)
    return (
        f" AND ((n.identity IS NOT NULL{node}) OR (r.identity IS NOT NULL{ends}))",
        [*nodes, *both],
    )


def recorded(conn: Sql, event: EventCore, observed: ObservationRecorded) -> None:
    """Keep the observation ``event`` recorded."""
    provenance = provenance_of(event)
    at = format_timestamp(event.occurred_at)
    conn.execute(
        _UPSERT,
        (
            observed.observation,
            observed.text or "",  # a forgotten text reads null (``eventlog.sealing``)
            provenance.source if provenance else "",
            provenance.extraction_method if provenance else "",
            provenance.reliability if provenance else 0.0,
            provenance.confidence if provenance else 0.0,
            event.actor.agent,
            observed.session or event.actor.session,
            observed.said_at or at,
            at,
            event.seq,
            scope_or_default(observed.scope),
        ),
    )
    passages.kept(conn, observed)


def cite(conn: Sql, event: EventCore, identity: str, kind: CitingKind) -> None:
    """Note each observation the write ``event`` cites, as cited by the fact it wrote."""
    cited = cited_observations(event)
    if cited:
        conn.executemany(_CITE, [(o, identity, kind, event.seq) for o in cited])


def _citation(row: tuple[Any, ...]) -> CitationRow:
    observation, identity, kind, seq, standing = row
    return CitationRow(
        observation, identity, "node" if kind == "node" else "relationship", seq, bool(standing)
    )


class ObservationQueries:
    """The questions asked of observations and citations (``StateProjection`` has them).
    Each takes the scopes the asker may see (``visible``; None: every scope) into its SQL:
    an observation is seen when its scope is, a citation when its fact is and stands."""

    def observation(
        self, conn: Sql, observation: str, visible: Visible = None
    ) -> ObservationRow | None:
        """One observation, or one passage of a document, by its id."""
        found = ObservationQueries.observations(self, conn, [observation], visible)
        return found[0] if found else None

    def observations(
        self, conn: Sql, ids: Iterable[str], visible: Visible = None
    ) -> list[ObservationRow]:
        """The observations (and passages) that exist among ``ids``, in their order, each
        once."""
        wanted = list(dict.fromkeys(ids))
        found: dict[str, ObservationRow] = {}
        scoped, scopes = in_scopes(["scope"], visible)
        cut = {i: named for i in wanted if (named := passage_of(i)) is not None}
        if cut and layout_of(conn) >= PASSAGES_LAYOUT:
            inside, _ = in_scopes(["o.scope"], visible)
            for passage, (document, begin) in cut.items():
                row = conn.execute(f"{_PASSAGE}{inside}", [document, begin, *scopes]).fetchone()
                if row is not None:
                    found[passage] = replace(ObservationRow(*row), id=passage)
        wanted_whole = [i for i in wanted if i not in cut]
        for start in range(0, len(wanted_whole), _CHUNK):
            chunk = wanted_whole[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            query = (
                f"SELECT {_OBSERVATION_COLUMNS} FROM state_observations "
                f"WHERE id IN ({marks}){scoped}"
            )
            for row in conn.execute(query, [*chunk, *scopes]):
                found[row[0]] = ObservationRow(*row)
        return [found[i] for i in wanted if i in found]

    def passage_starts(self, conn: Sql, observation: str) -> list[int]:
        """Where each passage of a document starts (none: a text kept as one passage)."""
        return passages.starts(conn, observation)

    def citing(
        self, conn: Sql, observation: str, limit: int = MAX_CITATIONS, visible: Visible = None
    ) -> list[CitationRow]:
        """The writes that cited ``observation``, oldest first, at most ``limit``: a
        document's are those citing it or any of its passages (``ID#START``): one range,
        the id and what follows it after ``#`` (``$`` sorts next; keys compare as bytes)."""
        seen, scopes = _seen(visible)
        rows = conn.execute(
            f"{_CITATIONS}{_SCOPED_ENDS if seen else ''}"
            f"WHERE c.observation >= ? AND c.observation < ?{seen} "
            "ORDER BY c.seq, c.identity LIMIT ?",
            [observation, observation + "$", *scopes, limit],
        )
        return [_citation(row) for row in rows]

    def cited_by(self, conn: Sql, identity: str, limit: int = MAX_CITATIONS) -> list[CitationRow]:
        """The observations the writes of one node or relationship cited, oldest first, at
        most ``limit``."""
        rows = conn.execute(
            f"{_CITATIONS}WHERE c.identity = ? ORDER BY c.seq, c.observation LIMIT ?",
            (identity, limit),
        )
        return [_citation(row) for row in rows]

    def cited_among(
        self, conn: Sql, identities: Sequence[str], observations: Sequence[str]
    ) -> set[tuple[str, str]]:
        """Which of ``observations`` the writes of each of ``identities`` cited, as (identity,
        observation) pairs: both lists are what the asker was already shown, so nothing here
        needs its scopes."""
        if not identities or not observations:
            return set()
        nodes, said = ",".join("?" * len(identities)), ",".join("?" * len(observations))
        rows = conn.execute(
            "SELECT DISTINCT identity, observation FROM state_citations "
            f"WHERE identity IN ({nodes}) AND observation IN ({said})",
            [*identities, *observations],
        )
        return {(identity, observation) for identity, observation in rows}

    def beside(
        self,
        conn: Sql,
        found: Sequence[ObservationRow],
        reach: int,
        visible: Visible = None,
    ) -> dict[str, list[tuple[int, ObservationRow]]]:
        """For each of ``found`` (by id), the observations of its session at most ``reach``
        places before or after it, each with its distance: what was said around it (none
        when it names no session). One statement per ``_BESIDE`` of them, each side of each
        a bounded range read of the session's index."""
        said = [o for o in dict.fromkeys(found) if o.session is not None]
        if reach < 1 or not said:
            return {}
        scoped, scopes = in_scopes(["scope"], visible)
        around: dict[str, list[tuple[int, ObservationRow]]] = {o.id: [] for o in said}
        for start in range(0, len(said), _BESIDE):
            chunk = said[start : start + _BESIDE]
            params: list[Any] = []
            for o in chunk:
                for _ in _SIDES:
                    params += [o.session, o.said_at, o.seq, *scopes, reach]
            sides: dict[tuple[int, int], list[ObservationRow]] = {}
            for row in conn.execute(_beside_sql(len(chunk), scoped), params):
                sides.setdefault((row[-2], row[-1]), []).append(ObservationRow(*row[:-2]))
            for i, o in enumerate(chunk):
                for side, (_, order) in enumerate(_SIDES):
                    rows = sorted(sides.get((i, side), []), key=lambda r: (r.said_at, r.seq))
                    ordered = rows[::-1] if order == "DESC" else rows
                    around[o.id] += list(enumerate(ordered, 1))
        whole = passages.documents_among(conn, [r.id for near in around.values() for _, r in near])
        if whole:  # a document is lent to by its passages only: beside a hit it is left out
            around = {
                i: [(d, r) for d, r in near if r.id not in whole] for i, near in around.items()
            }
        return around


_BESIDE = 50  # observations whose neighbours one statement reads
_SIDES = (("<", "DESC"), (">", "ASC"))


@lru_cache(maxsize=64)
def _beside_sql(count: int, scoped: str) -> str:
    """Two bounded range reads of a session (before, after) for each of ``count``
    observations, in one statement (SQLite and PostgreSQL both run it), each row tagged
    with the observation's place and the side."""
    return " UNION ALL ".join(
        f"SELECT *, {i} AS hit, {side} AS side FROM (SELECT {_OBSERVATION_COLUMNS} "
        f"FROM state_observations WHERE session = ? AND (said_at, seq) {op} (?, ?){scoped} "
        f"ORDER BY said_at {order}, seq {order} LIMIT ?) AS b{i}_{side}"
        for i in range(count)
        for side, (op, order) in enumerate(_SIDES)
    )
