"""Reading observations back: found by their words (the read model's text index, ranked
and paged as ``search_nodes`` is), or opened by id, each with where it came from and the
facts extracted from it that stand now. A document is found by its passages (each answered
as ``<id>#<start>`` with its own text, and the document and offset it is of); opened by its
id it answers its whole text and where each passage starts, and a passage opens by its own.

A read-only copy of a log from before observations were kept has none to find: a search
there finds nothing, and an id is not found.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Log
from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.reads.views import index_hits
from writegate.language.observations import CITABLE_ID, passage_of
from writegate.projections.state import ObservationRow, StateProjection

MAX_LIMIT = 500
MAX_FACTS = 50  # facts named per observation (the most recent writes' first)

_OUT = ConfigDict(extra="forbid", frozen=True)


class ObservationView(BaseModel):
    """One observation: what was said, from where, by whom, when; and what it backs."""

    model_config = _OUT

    observation_id: str
    text: str
    source: str
    extraction_method: str
    confidence: float
    agent: str  # who recorded it
    session: str | None  # the conversation it belongs to (the writer's name, else the session)
    said_at: str  # when it was said or valid
    recorded_at: str
    seq: int  # the event that recorded it
    # the nodes and relationships written citing it that stand now (at most MAX_FACTS)
    facts: list[str]
    # a search's why: the index's relevance (higher is better; its scale is the backend's)
    # and the query's searched words it holds, as the index matched them (left out: opened)
    score: float | None = Field(default=None, exclude_if=lambda v: v is None)
    terms: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    # a passage's: the document it is of and its first character's offset there (left out:
    # a whole observation)
    document: str | None = Field(default=None, exclude_if=lambda v: v is None)
    start: int | None = Field(default=None, exclude_if=lambda v: v is None)
    # a document's, opened: where each of its passages starts (left out: one passage)
    passages: list[int] | None = Field(default=None, exclude_if=lambda v: v is None)


class ObservationPage(BaseModel):
    """Observations found, the most relevant first; ``next_cursor`` continues."""

    model_config = _OUT

    observations: list[ObservationView]
    next_cursor: str | None = None


class ObservationReader:
    """Read-only questions about the observations of one log."""

    def __init__(self, log: Log, state: StateProjection) -> None:
        self._log = log
        self._state = state

    def search_observations(
        self, query: str, limit: int = 25, cursor: str | None = None
    ) -> ObservationPage:
        """The observations whose words begin with any word of ``query``, the most
        relevant first, paged by cursor."""
        if not query.strip():
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT, "query must not be empty", {"field": "query"}
            )
        if not 1 <= limit <= MAX_LIMIT:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                f"limit must be between 1 and {MAX_LIMIT}",
                {"field": "limit"},
            )
        with self._log.snapshot() as conn:
            if not self._state.keeps_observations(conn):
                return ObservationPage(observations=[])
            hits, next_cursor = index_hits(self._state, conn, query, "observation", limit, cursor)
            rows = self._state.observations(conn, [h.identity for h in hits])
            terms = self._state.text_index(conn).matched(
                conn, query, "observation", [r.id for r in rows]
            )
            scores = {h.identity: -h.score for h in hits}
            return ObservationPage(
                observations=[
                    self._view(conn, row).model_copy(
                        update={"score": scores[row.id], "terms": terms.get(row.id, [])}
                    )
                    for row in rows
                ],
                next_cursor=next_cursor,
            )

    def open_observation(self, observation_id: str) -> ObservationView:
        """One observation by its id, or one passage of a document by its own
        (``OBSERVATION_NOT_FOUND`` if the log holds none)."""
        if CITABLE_ID.fullmatch(observation_id) is None:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                "an observation id is obs_ and 32 hex digits (a passage's: then # and its start)",
                {"field": "observation_id"},
            )
        with self._log.snapshot() as conn:
            row = None
            if self._state.keeps_observations(conn):
                row = self._state.observation(conn, observation_id)
            if row is None:
                raise GateRejection(
                    ErrorCode.OBSERVATION_NOT_FOUND,
                    f"no observation {observation_id}",
                    {"missing": [observation_id]},
                )
            view = self._view(conn, row)
            cut = self._state.passage_starts(conn, row.id) if view.document is None else []
            return view.model_copy(update={"passages": cut}) if cut else view

    def _view(self, conn: Sql, row: ObservationRow) -> ObservationView:
        citing = self._state.citing(conn, row.id)
        standing = [c.identity for c in reversed(citing) if c.standing]
        document, start = passage_of(row.id) or (None, None)
        return ObservationView(
            observation_id=row.id,
            text=row.text,
            source=row.source,
            extraction_method=row.method,
            confidence=row.confidence,
            agent=row.agent,
            session=row.session,
            said_at=row.said_at,
            recorded_at=row.recorded_at,
            seq=row.seq,
            facts=list(dict.fromkeys(standing))[:MAX_FACTS],
            document=document,
            start=start,
        )
