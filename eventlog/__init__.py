"""The append-only, hash-chained event log.

This package knows nothing about graphs or schemas: it stores opaque events,
chains them with SHA-256, enforces idempotency keys and expected stream
versions, and lets callers read them back.
"""

from writegate.eventlog.canonical import GENESIS_HASH, canonical_json
from writegate.eventlog.contract import Log
from writegate.eventlog.errors import (
    ChainBroken,
    EventLogError,
    IdempotencyKeyReused,
    LogPermissionDenied,
    LogUnavailable,
    VersionConflict,
    one_line,
)
from writegate.eventlog.events import Actor, DraftEvent, Event, EventCore
from writegate.eventlog.opening import open_log
from writegate.eventlog.reading import EventPage
from writegate.eventlog.store import EventLog
from writegate.eventlog.transaction import AppendOutcome, InlineProjector, Transaction
from writegate.eventlog.verify import VerifyReport

__all__ = [
    "GENESIS_HASH",
    "Actor",
    "AppendOutcome",
    "ChainBroken",
    "DraftEvent",
    "Event",
    "EventCore",
    "EventLog",
    "EventLogError",
    "EventPage",
    "IdempotencyKeyReused",
    "InlineProjector",
    "Log",
    "LogPermissionDenied",
    "LogUnavailable",
    "Transaction",
    "VerifyReport",
    "VersionConflict",
    "canonical_json",
    "one_line",
    "open_log",
]
