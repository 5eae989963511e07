"""A fact citing the observations it was extracted from: the ids go into the write's
provenance, and each must be an observation the log holds when the write is checked (in
its transaction, so one recorded a moment before counts and none is taken on trust)."""

from __future__ import annotations

from collections.abc import Callable

from writegate.eventlog import Transaction
from writegate.eventlog.sql import Sql
from writegate.gate.ahead import want_retraction
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import Declared, WriteNodeRequest, WriteRelationshipRequest
from writegate.language.observations import document_of
from writegate.projections.state import ObservationRow, StateProjection

Emitter = Callable[[Transaction, int | None], None]


def cited(request: Declared) -> list[str] | None:
    """The observations a write cites, each once, in the order given (None: none)."""
    if isinstance(request, WriteNodeRequest | WriteRelationshipRequest) and request.observations:
        return list(dict.fromkeys(request.observations))
    return None


def checked(
    state: StateProjection, observations: list[str] | None, emit: Emitter, source: str
) -> Emitter:
    """``emit``, refused first if a standing retraction took back its source
    (``SOURCE_RETRACTED``), if any cited observation is missing from the read model
    (``OBSERVATION_NOT_FOUND``), or if one was taken back and the write's source is the
    observation's own (``OBSERVATION_RETRACTED``: a write naming a new source — one no
    retraction took back, not the observation's — vouches for it afresh). The retractions
    are read ahead with the nodes the write names (``gate.ahead``)."""
    want_retraction("source", [source])
    if observations:
        want_retraction("observation", [document_of(o) for o in observations])

    def check(tx: Transaction, item: int | None) -> None:
        if taken := state.retracted(tx.conn, "source", [source]):
            raise GateRejection(
                ErrorCode.SOURCE_RETRACTED,
                f"source {source!r} was taken back by retraction {taken[source]}: name a new "
                "source, or unretract it",
                {"source": source, "retraction": taken[source]},
            )
        if observations:
            _cited_held(state, tx, observations, source)
        emit(tx, item)

    return check


def held(state: StateProjection, conn: Sql, observations: list[str]) -> list[ObservationRow]:
    """The cited observations' rows; refused with ``OBSERVATION_NOT_FOUND`` unless the read
    model holds every one."""
    rows = state.observations(conn, observations)
    found = {row.id for row in rows}
    if missing := [o for o in observations if o not in found]:
        raise GateRejection(
            ErrorCode.OBSERVATION_NOT_FOUND,
            f"no observation {', '.join(missing)}: record it first (record_observation)",
            {"missing": missing},
        )
    return rows


def _cited_held(
    state: StateProjection, tx: Transaction, observations: list[str], source: str
) -> None:
    """Every cited observation held, and none taken back unless a new source vouches."""
    rows = held(state, tx.conn, observations)
    taken = state.retracted(tx.conn, "observation", [document_of(o) for o in observations])
    for row in rows:
        retraction = taken.get(document_of(row.id))
        if retraction is not None and row.source == source:
            raise GateRejection(
                ErrorCode.OBSERVATION_RETRACTED,
                f"observation {row.id} was taken back by retraction {retraction}: cite "
                "another, or name a new source that says it",
                {"observation": row.id, "retraction": retraction},
            )
