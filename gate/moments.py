"""A place in the log a caller names — a cursor, a time — read as the log can hold it.

Every tool that pages or filters by time reads its arguments here, so a value past what the
log can hold is the caller's ``INVALID_ARGUMENT``, never an overflow deep in a read: a seq
past SQLite's and PostgreSQL's largest integer, a time that leaves the calendar once in UTC
(``9999-12-31T23:59:59-23:59``), which every time the log keeps is in.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime

from writegate.gate.errors import ErrorCode, GateRejection

MAX_SEQ = 2**63 - 1
"""The largest seq the log can hold: SQLite's and PostgreSQL's largest integer."""


def cursor_after(cursor: str | None) -> int:
    """The seq a paging tool's ``cursor`` reads after (0: from the start)."""
    if not cursor:
        return 0
    try:
        after = int(cursor)
    except ValueError:
        after = -1
    if not 0 <= after <= MAX_SEQ:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT, "cursor is not one this tool returned", {"field": "cursor"}
        )
    return after


def in_utc(moment: datetime) -> datetime:
    """``moment`` if it is a time in UTC's calendar too (a time without a zone is UTC's)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{moment.isoformat()} leaves the calendar once in UTC") from None
    return moment


def moment_of(text: str | None, field: str) -> datetime | None:
    """The time a tool's ISO 8601 ``field`` names (None: none)."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"{field} {text!r} is not an ISO 8601 time",
            {"field": field},
        ) from None
    try:
        return in_utc(moment)
    except ValueError as why:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT, f"{field} {why}", {"field": field}
        ) from None


InCalendar = Annotated[AwareDatetime, AfterValidator(in_utc)]
"""A tool argument's time, with its zone, in UTC's calendar too."""
