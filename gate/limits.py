"""How big a write may be: checked on the raw arguments before any other work.

A request is walked once, iteratively, so neither a deeply nested value nor a huge
one costs more than its size (nothing recurses, nothing is encoded twice). Depth is
a malformed request (``INVALID_ARGUMENT``); the rest are ``LIMIT_EXCEEDED`` with
``details`` naming the limit, its maximum and what was sent.

Limits come, most specific first, from the gate's own setting (``Gate(limits=…)``,
``[limits]`` in ``writegate.toml``), the schema document's ``limits:`` section, and
the defaults below.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import canonical_json
from writegate.gate.errors import ErrorCode, GateRejection


class Limits(BaseModel):
    """Bounds on one request. The defaults admit every realistic write and no abuse."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_depth: int = Field(
        default=16, ge=4, le=64, description="Nesting of objects and lists in one request."
    )
    max_value_bytes: int = Field(
        default=65_536,
        ge=64,
        description="UTF-8 bytes of one property or key value (a list counts its items).",
    )
    max_properties: int = Field(
        default=256, ge=1, description="Properties (plus merge keys) in one node or edge write."
    )
    max_document_bytes: int = Field(
        default=4_194_304,
        ge=64,
        description="UTF-8 bytes of one observation's text (kept whole, searched by passage).",
    )
    max_request_bytes: int = Field(
        default=8_388_608, ge=1024, description="The whole request, as JSON."
    )
    max_batch_items: int = Field(default=10_000, ge=1, description="Operations in one batch.")


DEFAULT_LIMITS = Limits()
# the argument names whose values are a write's property maps
_PROPERTY_MAPS = ("properties", "merge_keys", "from_keys", "to_keys")


def check_request(arguments: Any, limits: Limits) -> None:
    """Raise ``GateRejection`` if ``arguments`` break ``limits``; linear in their size."""
    _check_depth(arguments, limits.max_depth)
    _check_sizes(arguments, limits)


def check_text(text: str, limits: Limits, field: str) -> None:
    """Raise ``LIMIT_EXCEEDED`` if a text kept whole (an observation's, a document perhaps:
    the text index holds it by passage) is larger than a document may be."""
    if (size := _size(text)) > limits.max_document_bytes:
        raise exceeded("max_document_bytes", limits.max_document_bytes, size, field)


def _check_depth(value: Any, bound: int) -> None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(current, dict):
            children = current.values()
        elif isinstance(current, list | tuple):
            children = current
        else:
            continue
        if depth > bound:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                f"the request nests objects or lists deeper than {bound} levels",
                {"limit": "max_depth", "max": bound},
            )
        stack.extend((child, depth + 1) for child in children)


def _check_sizes(arguments: Any, limits: Limits) -> None:
    items = arguments.get("items") if isinstance(arguments, dict) else None
    if isinstance(items, list):
        if len(items) > limits.max_batch_items:
            raise exceeded("max_batch_items", limits.max_batch_items, len(items), "items")
        writes = [(f"items.{i}.", item) for i, item in enumerate(items) if isinstance(item, dict)]
    else:
        writes = [("", arguments)] if isinstance(arguments, dict) else []
    total = 0
    for prefix, write in writes:
        count = 0
        for group in _PROPERTY_MAPS:
            values = write.get(group)
            if not isinstance(values, dict):
                continue
            count += len(values)
            for name, value in values.items():
                size = _size(value)
                total += size + len(str(name))
                if size > limits.max_value_bytes:
                    raise exceeded(
                        "max_value_bytes", limits.max_value_bytes, size, f"{prefix}{group}.{name}"
                    )
        if count > limits.max_properties:
            raise exceeded("max_properties", limits.max_properties, count, f"{prefix}properties")
        total += sum(_size(v) for k, v in write.items() if k not in _PROPERTY_MAPS)
        if total > limits.max_request_bytes:
            raise exceeded("max_request_bytes", limits.max_request_bytes, total, "arguments")


def _size(value: Any) -> int:
    """A value's size in UTF-8 bytes (an estimate for anything but strings, never low)."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, list | tuple):
        return sum(_size(item) for item in value) + len(value)
    if isinstance(value, dict):
        return sum(_size(v) + len(str(k)) for k, v in value.items()) + len(value)
    return 24  # numbers, booleans, null: at most this much as JSON


def exceeded(limit: str, maximum: int, got: int, field: str) -> GateRejection:
    """``LIMIT_EXCEEDED`` naming the limit, its maximum, what was sent and where."""
    return GateRejection(
        ErrorCode.LIMIT_EXCEEDED,
        f"{field} is too large: {got:,} where {limit} is {maximum:,}",
        {"limit": limit, "max": maximum, "got": got, "field": field},
    )


def json_safe(arguments: Any) -> None:
    """Refuse arguments that have no JSON form (they become the event's request)."""
    try:
        canonical_json(arguments)
    except TypeError as exc:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"arguments are not representable as JSON: {exc}",
            {"field": "arguments"},
        ) from exc


def idempotency_key(key: Any) -> str | None:
    """An idempotency key as sent, refused unless a string of 1 to 200 characters."""
    if key is None:
        return None
    if not isinstance(key, str) or not 1 <= len(key) <= 200:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            "idempotency_key must be a string of 1 to 200 characters",
            {"field": "idempotency_key"},
        )
    return key
