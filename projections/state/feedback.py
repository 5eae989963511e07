"""Feedback weights in the read model: kept with each append, asked by ranking.

``given`` moves each used fact's weight by the event's own ``alpha`` toward its outcome's
target (``language.moved``), in the append's transaction like every state change, so a
replay of the log reproduces every weight. ``feedback_weights`` is what a ranking reads
and ``rank_factor`` what it multiplies relevance by: a floor keeps a rejected fact
findable, so feedback can reorder answers but never bury a fact.
"""

from __future__ import annotations

from collections.abc import Iterable

from writegate.eventlog import EventCore
from writegate.eventlog.sql import Sql
from writegate.language import INITIAL_WEIGHT, FeedbackGiven, moved
from writegate.projections.state.tables import FEEDBACK_LAYOUT, layout_of

DEFAULT_FLOOR = 0.5  # a fact's ranking factor never falls below this
_CHUNK = 500  # identities per IN (...) lookup

_UPSERT = (
    "INSERT INTO state_feedback (identity, weight, updates, last_seq) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (identity) DO UPDATE SET weight = excluded.weight, "
    "updates = excluded.updates, last_seq = excluded.last_seq"
)


def given(conn: Sql, event: EventCore, feedback: FeedbackGiven) -> None:
    """Move each used fact's weight once: an event applied again (at-least-once delivery
    to a read model in a file of its own) finds its seq recorded and moves nothing."""
    used = list(dict.fromkeys([*feedback.nodes, *(r.identity for r in feedback.relationships)]))
    now = _rows(conn, used)
    rows = []
    for identity in used:
        weight, updates, last_seq = now.get(identity, (INITIAL_WEIGHT, 0, 0))
        if last_seq >= event.seq:
            continue
        rows.append(
            (identity, moved(weight, feedback.alpha, feedback.outcome), updates + 1, event.seq)
        )
    if rows:
        conn.executemany(_UPSERT, rows)


def feedback_weights(conn: Sql, identities: Iterable[str]) -> dict[str, float]:
    """The feedback weight of each of ``identities`` (nodes' or relationships'), in [0, 1]:
    ``INITIAL_WEIGHT`` for a fact no feedback named (and on a read model of a layout
    before weights were kept)."""
    wanted = list(dict.fromkeys(identities))
    weights = dict.fromkeys(wanted, INITIAL_WEIGHT)
    if wanted and layout_of(conn) >= FEEDBACK_LAYOUT:
        weights.update((identity, row[0]) for identity, row in _rows(conn, wanted).items())
    return weights


def rank_factor(weight: float, floor: float = DEFAULT_FLOOR) -> float:
    """What a ranking multiplies a fact's relevance by: ``floor`` for a fact every answer
    rejected, 1 for one every answer accepted, linear between."""
    return floor + (1.0 - floor) * weight


def _rows(conn: Sql, identities: list[str]) -> dict[str, tuple[float, int, int]]:
    found: dict[str, tuple[float, int, int]] = {}
    for start in range(0, len(identities), _CHUNK):
        chunk = identities[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        cursor = conn.execute(
            "SELECT identity, weight, updates, last_seq FROM state_feedback "
            f"WHERE identity IN ({marks})",
            chunk,
        )
        for identity, weight, updates, last_seq in cursor:
            found[identity] = (float(weight), int(updates), int(last_seq))
    return found
