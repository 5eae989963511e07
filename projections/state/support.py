"""The writes supporting each fact's current version: who said it, from what, how, how sure.

A node's (or relationship's) write records itself as the one support of the version it
made (a new version forgets the old one's supports: they said something else); each
corroboration since (``language.corroborations``) adds a row, with the confidence the fact
reached by the formula provider's rule, as the event carries it. A deletion forgets them.
Kept in the append's transaction like every state change, so a replay reproduces them,
confidences included; the gate asks whether a write brings anything new, reads and
``audit`` ask what supports a fact.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from writegate.eventlog import EventCore, canonical_json
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.pgheld import held
from writegate.eventlog.sql import Sql, sent
from writegate.language import Corroborated, provenance_of
from writegate.projections.state.tables import SUPPORT_LAYOUT, layout_of

_CHUNK = 500  # identities per IN (...) lookup
COLUMNS = (
    "identity, seq, kind, version, agent, source, method, reliability, confidence, "
    "corroborated, observations, valid_from, valid_to, occurred_at"
)
_INSERT = (
    f"INSERT INTO state_support ({COLUMNS}) VALUES ({','.join('?' * 14)}) "
    "ON CONFLICT (identity, seq) DO NOTHING"
)
# PostgreSQL's only: the identities a JSON array, each looked up by its key and its rows
# deleted where they are. ``identity = ANY(...)`` of an array the planner cannot count may be
# planned, while the table is small, as a scan of it, and the server keeps that plan for the
# prepared statement as the table grows until it is next analysed (0.25 ms a write at 2,000
# nodes, measured); this one stays a probe of the key a node
_FORGET_ALL = (
    "DELETE FROM state_support USING json_array_elements_text(?::json) AS named(v) "
    "CROSS JOIN LATERAL (SELECT ctid AS at FROM state_support WHERE identity = named.v "
    "OFFSET 0) AS found WHERE state_support.ctid = found.at"
)


@dataclass(frozen=True)
class Support:
    """One write supporting a fact's current version (``kind``: ``written`` for the write
    that made the version, ``corroborated`` for each corroboration since)."""

    identity: str
    seq: int
    kind: str
    version: int
    agent: str
    source: str
    method: str
    reliability: float
    confidence: float  # this write's own
    corroborated: float  # the fact's, with this support (by the provider's rule)
    observations: list[str]
    valid_from: str | None
    valid_to: str | None
    occurred_at: str

    @property
    def who(self) -> tuple[str, str, str]:
        """What makes a support new: its agent, source and method."""
        return (self.agent, self.source, self.method)


class Rewritten:
    """The versions an append's transaction wrote, each with its one support (None: none),
    held until its next read (``eventlog.pgsql.held``): a batch's are one delete and one
    insert, not two statements a node."""

    tables: ClassVar[tuple[str, ...]] = ("state_support",)
    # the delete sees the rows as they were before the statement; those inserted are new
    # versions' supports, of this transaction's events, never a row it deletes
    together: ClassVar[bool] = True
    first: ClassVar[bool] = False

    def __init__(self) -> None:
        self.rows: dict[str, tuple[Any, ...] | None] = {}

    def statements(self) -> list[tuple[str, list[tuple[Any, ...]]]]:
        kept = [row for row in self.rows.values() if row is not None]
        return [(_FORGET_ALL, [(orjson.dumps(list(self.rows)).decode(),)]), (_INSERT, kept)]


def written(
    conn: Sql,
    event: EventCore,
    identity: str,
    version: int,
    by: str,
    valid: tuple[str | None, str | None],
) -> None:
    """A new version: its writer is its one support."""
    provenance = provenance_of(event)
    row = None
    if provenance is not None:  # a write that records none supports nothing anyone can weigh
        row = (
            identity,
            event.seq,
            "written",
            version,
            by,
            provenance.source,
            provenance.extraction_method,
            provenance.reliability,
            provenance.confidence,
            provenance.confidence,
            canonical_json(provenance.observations or []).decode(),
            *valid,
            format_timestamp(event.occurred_at),
        )
    if (rewritten := held(conn, Rewritten)) is not None:
        rewritten.rows[identity] = row
        return
    sent(conn, "DELETE FROM state_support WHERE identity = ?", (identity,))
    if row is not None:
        sent(conn, _INSERT, row)


def corroborated(conn: Sql, event: EventCore, payload: Corroborated) -> None:
    """One more support of the version the corroboration names (applied again: as it was)."""
    provenance = provenance_of(event)
    if provenance is None:
        return
    conn.execute(
        _INSERT,
        (
            payload.subject,
            event.seq,
            "corroborated",
            payload.version,
            event.actor.agent,
            provenance.source,
            provenance.extraction_method,
            provenance.reliability,
            provenance.confidence,
            payload.corroborated_confidence,
            canonical_json(provenance.observations or []).decode(),
            None,
            None,
            format_timestamp(event.occurred_at),
        ),
    )


def put(conn: Sql, row: tuple[object, ...]) -> None:
    """One support row as a retraction's image holds it (``retracting``)."""
    conn.execute(_INSERT, row)


def forget(conn: Sql, identity: str) -> None:
    conn.execute("DELETE FROM state_support WHERE identity = ?", (identity,))


def _support(row: tuple[object, ...]) -> Support:
    return Support(
        str(row[0]),
        int(row[1]),  # type: ignore[call-overload]
        str(row[2]),
        int(row[3]),  # type: ignore[call-overload]
        str(row[4]),
        str(row[5]),
        str(row[6]),
        float(row[7]),  # type: ignore[arg-type]
        float(row[8]),  # type: ignore[arg-type]
        float(row[9]),  # type: ignore[arg-type]
        list(orjson.loads(str(row[10]))),
        None if row[11] is None else str(row[11]),
        None if row[12] is None else str(row[12]),
        str(row[13]),
    )


class SupportQueries:
    """What the read model answers about the writes supporting facts."""

    def support(self, conn: Sql, identity: str) -> list[Support]:
        """The writes supporting one fact's current version, oldest first (none on a read
        model of a layout before they were kept)."""
        if layout_of(conn) < SUPPORT_LAYOUT:
            return []
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM state_support WHERE identity = ? ORDER BY seq", (identity,)
        )
        return [_support(row) for row in rows]

    def corroborations(self, conn: Sql, identities: Iterable[str]) -> dict[str, list[Support]]:
        """The corroborations of each of ``identities`` that has any, oldest first: what a
        read shows beside a fact's last write (one probe a fact, no row for most)."""
        wanted = list(dict.fromkeys(identities))
        found: dict[str, list[Support]] = {}
        if not wanted or layout_of(conn) < SUPPORT_LAYOUT:
            return found
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM state_support WHERE identity IN ({marks}) "
                "AND kind = 'corroborated' ORDER BY identity, seq",
                chunk,
            )
            for row in rows:
                found.setdefault(str(row[0]), []).append(_support(row))
        return found


def sources(supports: Iterable[Support]) -> list[str]:
    """The distinct sources among ``supports``, in the order first heard."""
    return list(dict.fromkeys(s.source for s in supports))
