"""The text of the JSONL snapshot: metadata strings, node names, and each record's bytes.

Split from the model so that a node's metadata can be rendered when it is written (once per
write, kept in the model) and the file assembled from stored pieces in one pass. Records
are built from ``orjson``-encoded parts in sorted key order, the bytes ``orjson.dumps`` of
the whole record would give, so the same log gives the same file.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any

import orjson

from writegate.eventlog.events import format_timestamp

CITED = ("confidence", "source", "extraction_method")  # the provenance a snapshot shows
_dumps = orjson.dumps


@lru_cache(maxsize=4096)  # a handful of property names, rendered once per node each
def display_name(key: str) -> str:
    """Seed 001's PropertyDisplayName: ``currentLocation`` -> ``Current Location``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).replace("_", " ")
    return " ".join(word[:1].upper() + word[1:] for word in spaced.split())


def text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def property_lines(properties: dict[str, Any], keys: dict[str, Any]) -> list[str]:
    """``Key: Value`` strings for the properties that are not merge keys (the name says those)."""
    return [f"{display_name(k)}: {text(v)}" for k, v in sorted(properties.items()) if k not in keys]


def origin_lines(
    cited: tuple[Any, ...],
    updated_by: str,
    updated_at: datetime,
    remapped_from: str | None,
    stub: bool,
    resolved_from: str | None = None,
) -> list[str]:
    """``Key: Value`` strings saying where the node's latest fact came from."""
    fields = {
        **dict(zip(CITED, cited, strict=True)),
        "written_by": updated_by,
        "last_updated": format_timestamp(updated_at),
        "schema_remap_from": remapped_from,
        "resolved_from": resolved_from,
        "stub": True if stub else None,
    }
    return [f"{display_name(k)}: {text(v)}" for k, v in fields.items() if v is not None]


def heard_lines(confidence: float, sources: list[str]) -> list[str]:
    """``Key: Value`` strings saying a node's current facts are corroborated, and by what."""
    return [
        f"{display_name('corroborated_confidence')}: {text(confidence)}",
        f"{display_name('supported_by')}: {text(sources)}",
    ]


def plain_name(keys: dict[str, Any], identity: str) -> str:
    """The name both formats give a node, before a clash qualifies it with the label: the
    ``name`` key's value, else the single key's, else (several keys) the whole identity."""
    if "name" in keys:
        return text(keys["name"])
    return text(next(iter(keys.values()))) if len(keys) == 1 else identity


def shown_name(name: str, label: str, clash: int) -> str:
    """``name``, or ``name (Label)`` when another node has the same name."""
    return f"{name} ({label})" if clash else name


def node_record(mesh: bool, name: str, label: str, lines: bytes) -> bytes:
    """One node's line; ``lines`` is its metadata (observations), JSON-encoded."""
    if mesh:
        return b'{"metadata":%b,"name":%b,"nodeType":%b,"type":"node"}\n' % (
            lines,
            _dumps(name),
            _dumps(label),
        )
    return b'{"entityType":%b,"name":%b,"observations":%b,"type":"entity"}\n' % (
        _dumps(label),
        _dumps(name),
        lines,
    )


def edge_record(mesh: bool, type_: str, start: str, end: str, weight: bytes) -> bytes:
    """One relationship's line; ``weight`` is its confidence, JSON-encoded."""
    if mesh:
        return b'{"edgeType":%b,"from":%b,"to":%b,"type":"edge","weight":%b}\n' % (
            _dumps(type_),
            _dumps(start),
            _dumps(end),
            weight,
        )
    return b'{"from":%b,"relationType":%b,"to":%b,"type":"relation"}\n' % (
        _dumps(start),
        _dumps(type_),
        _dumps(end),
    )
