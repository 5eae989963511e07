"""Stored rows back into events: the one place a row's columns are decoded.

Replays decode every event in the log, so this is a hot path: values the log wrote and
hashed are not validated again (``trusted``), and the actors and timestamps that repeat
along the log are decoded once and shared (both are immutable).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import orjson

from writegate.eventlog.events import Actor, Event, EventCore, parse_timestamp, trusted


@lru_cache(maxsize=1024)
def _actor(text: str) -> Actor:
    return trusted(Actor, orjson.loads(text))


@lru_cache(maxsize=256)
def _occurred(text: str) -> datetime:
    return parse_timestamp(text)


def core_values(row: Sequence[Any]) -> dict[str, Any]:
    """The ``EventCore`` fields of a stored row (its first columns are ``CORE_COLUMNS``)."""
    loads = orjson.loads
    return {
        "seq": row[0],
        "event_id": row[1],
        "type": row[2],
        "occurred_at": _occurred(row[3]),
        "actor": _actor(row[4]),
        "streams": loads(row[5]),
        "payload": loads(row[6]),
        "provenance": loads(row[7]),
    }


def row_to_core(row: Sequence[Any]) -> EventCore:
    return trusted(EventCore, core_values(row))


def row_to_event(row: Sequence[Any]) -> Event:
    """Build an Event from a stored row (columns in ``EVENT_COLUMNS`` order)."""
    values = core_values(row)
    values["request"] = orjson.loads(row[8])
    values["idempotency_key"], values["prev_hash"], values["hash"] = row[9], row[10], row[11]
    return trusted(Event, values)
