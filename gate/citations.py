"""A fact citing the observations it was extracted from: the ids go into the write's
provenance, and each must be an observation the log holds when the write is checked (in
its transaction, so one recorded a moment before counts and none is taken on trust)."""

from __future__ import annotations

from collections.abc import Callable

from writegate.eventlog import Transaction
from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import Declared, WriteNodeRequest, WriteRelationshipRequest
from writegate.projections.state import StateProjection

Emitter = Callable[[Transaction, int | None], None]


def cited(request: Declared) -> list[str] | None:
    """The observations a write cites, each once, in the order given (None: none)."""
    if isinstance(request, WriteNodeRequest | WriteRelationshipRequest) and request.observations:
        return list(dict.fromkeys(request.observations))
    return None


def checked(state: StateProjection, observations: list[str] | None, emit: Emitter) -> Emitter:
    """``emit``, refused with ``OBSERVATION_NOT_FOUND`` first if any cited observation is
    missing from the read model."""
    if not observations:
        return emit

    def check(tx: Transaction, item: int | None) -> None:
        held(state, tx.conn, observations)
        emit(tx, item)

    return check


def held(state: StateProjection, conn: Sql, observations: list[str]) -> None:
    """Refuse with ``OBSERVATION_NOT_FOUND`` unless the read model holds every one cited."""
    found = {row.id for row in state.observations(conn, observations)}
    if missing := [o for o in observations if o not in found]:
        raise GateRejection(
            ErrorCode.OBSERVATION_NOT_FOUND,
            f"no observation {', '.join(missing)}: record it first (record_observation)",
            {"missing": missing},
        )
