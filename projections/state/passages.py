"""A document's passages in the read model: where each starts in its observation's text.

``state_passages`` holds one row per passage of an observation whose event cut its text
into more than one (``ObservationRecorded.passages``); a text kept as one passage has none.
The text itself stays once, in the observation's row: a passage is read as a slice of it
(``substr``, in characters on SQLite and PostgreSQL alike), so the text index gets each
passage as a document of its own, named ``<id>#<start>``, and never the whole document.
"""

from __future__ import annotations

from collections.abc import Sequence

from writegate.eventlog.sql import Sql
from writegate.language import ObservationRecorded
from writegate.language.observations import passage_id
from writegate.projections.search.contract import Document
from writegate.projections.state.tables import PASSAGES_LAYOUT, layout_of

_CHUNK = 500  # ids per IN (...) lookup
_KEEP = (
    "INSERT INTO state_passages (observation, start, length) VALUES (?, ?, ?) "
    "ON CONFLICT DO NOTHING"
)
# a passage's text, of ``state_passages p`` and ``state_observations o`` (PostgreSQL's substr
# takes integers: the columns are its bigints)
SLICE = "substr(o.text, CAST(p.start + 1 AS INTEGER), CAST(p.length AS INTEGER))"
_DOCUMENTS = (
    f"SELECT p.start, {SLICE}, o.scope "
    "FROM state_passages p JOIN state_observations o ON o.id = p.observation "
    "WHERE p.observation = ? ORDER BY p.start"
)


def kept(conn: Sql, observed: ObservationRecorded) -> None:
    """Keep the passages the event cut its observation's text into (none: one passage, or a
    forgotten text — replayed after a forgetting, it makes none, as a replay does)."""
    spans = observed.spans()
    if spans:
        conn.executemany(
            _KEEP, [(observed.observation, start, end - start) for start, end in spans]
        )


def documents(conn: Sql, observation: str) -> list[Document]:
    """The text index's documents of a document's passages (none: it has no passages)."""
    return [
        Document(passage_id(observation, int(start)), "observation", str(text), scope, scope)
        for start, text, scope in conn.execute(_DOCUMENTS, (observation,)).fetchall()
    ]


def starts(conn: Sql, observation: str) -> list[int]:
    """Where each passage of ``observation`` starts (none: it is one passage, or the read
    model is a read-only copy from before passages were kept)."""
    if layout_of(conn) < PASSAGES_LAYOUT:
        return []
    rows = conn.execute(
        "SELECT start FROM state_passages WHERE observation = ? ORDER BY start", (observation,)
    )
    return [int(row[0]) for row in rows]


def documents_among(conn: Sql, observations: Sequence[str]) -> set[str]:
    """Those of ``observations`` that are documents cut into passages."""
    wanted = list(dict.fromkeys(observations))
    if not wanted or layout_of(conn) < PASSAGES_LAYOUT:
        return set()
    found: set[str] = set()
    for at in range(0, len(wanted), _CHUNK):
        chunk = wanted[at : at + _CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT observation FROM state_passages WHERE observation IN ({marks}) AND start = 0",
            chunk,
        )
        found.update(str(row[0]) for row in rows)
    return found


def forget(conn: Sql, observations: Sequence[str]) -> list[str]:
    """Delete the passages of ``observations``; the ids of those deleted (the text index's
    documents of them)."""
    gone = [passage_id(o, start) for o in observations for start in starts(conn, o)]
    for observation in observations:
        conn.execute("DELETE FROM state_passages WHERE observation = ?", (observation,))
    return gone
