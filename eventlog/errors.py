"""Errors the log raises; callers (the gate) turn them into their own codes."""

from __future__ import annotations


class EventLogError(Exception):
    """Base class for log failures that are not caller mistakes."""


class VersionConflict(EventLogError):
    """A draft expected a stream version other than the current one."""

    def __init__(self, stream: str, expected: int, current: int) -> None:
        super().__init__(f"stream {stream!r} is at version {current}, not {expected}")
        self.stream = stream
        self.expected = expected
        self.current = current


class IdempotencyKeyReused(EventLogError):
    """The same idempotency key arrived with a different request."""

    def __init__(self, key: str) -> None:
        super().__init__(f"idempotency key {key!r} was already used for a different request")
        self.key = key


class LogUnavailable(EventLogError):
    """The log's database could not be reached or written (a full disk), or the connection
    broke mid-transaction: nothing of that transaction was kept, so the caller may retry it
    as it was. ``cause`` is the database's own words, when they say more than the message."""

    def __init__(self, message: str, *, cause: str | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class ChainBroken(LogUnavailable):
    """The chain does not verify where a writer would extend it: nothing was written. Not a
    passing fault: an operator must look (``writegate verify``) before anyone can write."""

    def __init__(self, where: str, seq: int, problem: str) -> None:
        cause = f"chain broken at seq {seq}: {problem}"
        super().__init__(
            f"{where}: {cause}; nothing was written (`writegate verify` checks the whole chain)",
            cause=cause,
        )
        self.seq = seq


class LogBusy(LogUnavailable):
    """The log's write lock was not had within the lock timeout (other appends held it):
    nothing was appended, so the caller may retry as it was."""


class LogPermissionDenied(EventLogError):
    """The database role may not do what was asked (a grant missing, or DDL it may not run)."""


class NotAnEventLog(EventLogError):
    """The file exists but is not a writegate log (or is a newer format)."""


def one_line(exc: BaseException) -> str:
    """A driver's message with its line breaks folded (errors are said in one line); its
    type's name when it says nothing."""
    return " ".join(str(exc).split()) or type(exc).__name__
