"""Canonical JSON and the hash chain.

Canonical JSON is what ``orjson`` writes with ``OPT_SORT_KEYS``: keys sorted by
code point at every level, no whitespace, UTF-8, floats in their shortest
round-trip form (Python's ``repr``). ``hash = sha256(prev_hash + body)`` where
``body`` is the canonical JSON of the event without its ``hash`` field.

Each event column is stored as the canonical JSON of its value, so the body can
be assembled from the stored column text without re-encoding: that keeps the
append path and ``verify`` on one definition and makes both fast.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

GENESIS_HASH = "0" * 64

# Every field of an event except ``hash``, in canonical (sorted) order.
BODY_FIELDS: tuple[str, ...] = (
    "actor",
    "event_id",
    "idempotency_key",
    "occurred_at",
    "payload",
    "prev_hash",
    "provenance",
    "request",
    "seq",
    "streams",
    "type",
)
_KEY_PREFIXES = tuple(orjson.dumps(name) + b":" for name in BODY_FIELDS)


def canonical_json(value: Any) -> bytes:
    """Encode ``value`` canonically; raises ``TypeError`` for non-JSON values."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def event_body(parts: Mapping[str, bytes]) -> bytes:
    """Assemble the canonical body from per-field canonical encodings."""
    return (
        b"{"
        + b",".join(p + parts[f] for p, f in zip(_KEY_PREFIXES, BODY_FIELDS, strict=True))
        + b"}"
    )


def stored_body(
    *,
    seq: int,
    event_id: str,
    type: str,
    occurred_at: str,
    actor: str,
    streams: str,
    payload: str,
    provenance: str,
    request: str,
    idempotency_key: str | None,
    prev_hash: str,
) -> bytes:
    """The canonical body of an event from its stored columns (the JSON columns as stored).

    The one definition of the hash body: appends compute it before they insert, ``verify``
    recomputes it from the rows, and a second backend stores the same columns.
    """
    dumps = orjson.dumps
    return event_body(
        {
            "actor": actor.encode(),
            "event_id": dumps(event_id),
            "idempotency_key": dumps(idempotency_key),
            "occurred_at": dumps(occurred_at),
            "payload": payload.encode(),
            "prev_hash": dumps(prev_hash),
            "provenance": provenance.encode(),
            "request": request.encode(),
            "seq": str(seq).encode(),
            "streams": streams.encode(),
            "type": dumps(type),
        }
    )


def chain_hash(prev_hash: str, body: bytes) -> str:
    return hashlib.sha256(prev_hash.encode("ascii") + body).hexdigest()
