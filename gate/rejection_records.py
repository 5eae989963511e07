"""What the rejections table keeps (``gate.rejections``): a refusal as read back
(``Rejection``, by audits and a subject's export), as it waits to be written (``Refused``),
and for how long at most (``max_age_of``: a refused request may hold personal data)."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from datetime import timedelta

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Actor
from writegate.gate.refusal_seals import Seal


class Rejection(BaseModel):
    """One refused request as the table keeps it (read by audits and a subject's export)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: int
    at: str
    agent: str
    session: str | None
    transport: str
    operation: str
    error_code: str
    message: str
    request: str  # canonical JSON, cut at 64 KiB
    details: str | None = None  # canonical JSON of the refusal's details (None: unrecorded)


@dataclass(frozen=True)
class Refused:
    """One refusal as it will be stored; ``at`` is when it was refused, not recorded."""

    at: str
    actor: Actor
    operation: str
    error_code: str
    message: str
    request: str
    details: str | None
    seal: Seal | None = None  # how its personal values are sealed (``gate.refusal_seals``)

    @staticmethod
    def kept(r: Rejection) -> Refused:
        who = Actor(agent=r.agent, session=r.session, transport=r.transport)
        return Refused(r.at, who, r.operation, r.error_code, r.message, r.request, r.details)

    def said(self) -> str:
        return f"{self.operation} by {self.actor.agent} ({self.error_code}) at {self.at}"


MAX_AGE_DAYS = 100_000  # an age limit's most: beyond it the cut-off falls before year 1
MAX_KEPT = 2**63 - 1  # a count's most: SQLite's and PostgreSQL's largest integer


def max_age_of(days: str | float | None, where: str) -> timedelta | None:
    """An age limit given in days (None or empty: none); a value that is no positive number
    of at most ``MAX_AGE_DAYS`` is a ``ValueError`` naming ``where``."""
    if days is None or days == "":
        return None
    with suppress(ValueError):
        if 0 < (value := float(days)) <= MAX_AGE_DAYS:
            return timedelta(days=value)
    raise ValueError(
        f"{where} must be a positive number of days, at most {MAX_AGE_DAYS:,}, not {days!r}"
    )


def kept_of(count: str | None, where: str, default: int) -> int:
    """A count of rows to keep (0: none; None or empty: ``default``); anything else is a
    ``ValueError`` naming ``where``."""
    if count is None or count == "":
        return default
    with suppress(ValueError):
        if 0 <= (value := int(count)) <= MAX_KEPT:
            return value
    raise ValueError(f"{where} must be a whole number of rows from 0 to {MAX_KEPT}, not {count!r}")


__all__ = ["MAX_AGE_DAYS", "MAX_KEPT", "Refused", "Rejection", "kept_of", "max_age_of"]
