"""Observations in the read model: the texts agents kept, and the writes that cited them.

``state_observations`` holds each observation once (its first recording: a repeat appends
nothing); ``state_citations`` holds one row per write that cited one, by the fact it wrote
and the write's seq, so a reader goes from an observation to the facts extracted from it
(``citing``) and from a fact to the observations behind it (``cited_by``). A citation
outlives the fact's deletion (``CitationRow.standing`` says whether the fact stands): where
a write came from stays said. The text index gets each observation's text, as documents
of kind ``observation`` (``projection``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any, Literal

from writegate.eventlog import EventCore
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sql import Sql
from writegate.language import ObservationRecorded, cited_observations, provenance_of

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
    f"INSERT INTO state_observations ({_OBSERVATION_COLUMNS}) "
    f"VALUES ({', '.join('?' * len(fields(ObservationRow)))}) ON CONFLICT DO NOTHING"
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


def recorded(conn: Sql, event: EventCore, observed: ObservationRecorded) -> None:
    """Keep the observation ``event`` recorded."""
    provenance = provenance_of(event)
    at = format_timestamp(event.occurred_at)
    conn.execute(
        _UPSERT,
        (
            observed.observation,
            observed.text,
            provenance.source if provenance else "",
            provenance.extraction_method if provenance else "",
            provenance.reliability if provenance else 0.0,
            provenance.confidence if provenance else 0.0,
            event.actor.agent,
            observed.session or event.actor.session,
            observed.said_at or at,
            at,
            event.seq,
        ),
    )


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
    """The questions asked of observations and citations (``StateProjection`` has them)."""

    def observation(self, conn: Sql, observation: str) -> ObservationRow | None:
        row = conn.execute(
            f"SELECT {_OBSERVATION_COLUMNS} FROM state_observations WHERE id = ?",
            (observation,),
        ).fetchone()
        return ObservationRow(*row) if row is not None else None

    def observations(self, conn: Sql, ids: Iterable[str]) -> list[ObservationRow]:
        """The observations that exist among ``ids``, in their order, each once."""
        wanted = list(dict.fromkeys(ids))
        found: dict[str, ObservationRow] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT {_OBSERVATION_COLUMNS} FROM state_observations WHERE id IN ({marks})"
            for row in conn.execute(query, chunk):
                found[row[0]] = ObservationRow(*row)
        return [found[i] for i in wanted if i in found]

    def citing(self, conn: Sql, observation: str, limit: int = MAX_CITATIONS) -> list[CitationRow]:
        """The writes that cited ``observation``, oldest first, at most ``limit``."""
        rows = conn.execute(
            f"{_CITATIONS}WHERE c.observation = ? ORDER BY c.seq, c.identity LIMIT ?",
            (observation, limit),
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

    def beside(
        self, conn: Sql, observation: ObservationRow, reach: int
    ) -> list[tuple[int, ObservationRow]]:
        """The observations of ``observation``'s session at most ``reach`` places before or
        after it, in the order they were said (ties by seq), each with its distance: what
        was said around it. None when it names no session."""
        if observation.session is None or reach < 1:
            return []
        around: list[tuple[int, ObservationRow]] = []
        for side, order in (("<", "DESC"), (">", "ASC")):
            rows = conn.execute(
                f"SELECT {_OBSERVATION_COLUMNS} FROM state_observations "
                f"WHERE session = ? AND (said_at, seq) {side} (?, ?) "
                f"ORDER BY said_at {order}, seq {order} LIMIT ?",
                (observation.session, observation.said_at, observation.seq, reach),
            )
            around += [(distance, ObservationRow(*row)) for distance, row in enumerate(rows, 1)]
        return around
