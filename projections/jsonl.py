"""The current graph as a JSONL snapshot: MemoryMesh's format (seed 001 §2.4) or the MCP memory
server's, for tools that read those files.

The projection's store is a ``StateStore`` in a sidecar file (``<path>.state.db``) holding the
checkpoint; after every applied batch the JSONL file is rendered from it and swapped in
atomically. Output is deterministic: nodes sorted by identity, then edges sorted by
identity, keys sorted, so the same log gives the same bytes. Provenance rides in the
metadata strings (``"Confidence: 0.675"``, ``"Source: …"``); an edge's ``weight`` is the
relationship's confidence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import orjson

from eventlog import Event
from projections.files import write_atomically
from projections.statestore import StateStore

Format = Literal["memorymesh", "mcp-memory"]
FORMATS: tuple[Format, ...] = ("memorymesh", "mcp-memory")

_RENDERED = (
    "CREATE TABLE IF NOT EXISTS jsonl_rendered (path TEXT PRIMARY KEY, seq INTEGER NOT NULL)"
)


@lru_cache(maxsize=4096)  # a handful of property names, rendered once per node each
def display_name(key: str) -> str:
    """Seed 001's PropertyDisplayName: ``currentLocation`` -> ``Current Location``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).replace("_", " ")
    return " ".join(word[:1].upper() + word[1:] for word in spaced.split())


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def metadata(
    properties: dict[str, Any],
    keys: dict[str, Any],
    provenance: dict[str, Any],
    extra: dict[str, Any],
) -> list[str]:
    """``Key: Value`` strings: the properties, then where the fact came from."""
    own = sorted((k, v) for k, v in properties.items() if k not in keys)
    lines = [f"{display_name(k)}: {_text(v)}" for k, v in own]
    trail = {
        "confidence": provenance.get("confidence"),
        "source": provenance.get("source"),
        "extraction_method": provenance.get("extraction_method"),
        **extra,
    }
    lines += [f"{display_name(k)}: {_text(v)}" for k, v in trail.items() if v is not None]
    return lines


class JsonlProjector:
    def __init__(self, path: str | Path, name: str = "jsonl", fmt: Format = "memorymesh") -> None:
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
        self.name = name
        self.path = Path(path)
        self.format = fmt
        self.store = StateStore(self.path.with_name(self.path.name + ".state.db"), name)
        self._deferred = False
        self.store.conn.execute(_RENDERED)
        if self._rendered() != self.store.checkpoint() or not self.path.exists():
            self._render()  # a crash came between the commit and the swap

    def checkpoint(self) -> int:
        return self.store.checkpoint()

    def apply(self, events: Sequence[Event]) -> int:
        before = self.store.checkpoint()
        checkpoint = self.store.apply(events)
        if checkpoint != before or not self.path.exists():
            self._render()
        return checkpoint

    def reset(self) -> None:
        self.store.reset()
        self._render()

    @contextmanager
    def staged(self) -> Iterator[None]:
        """Render once at the end (a rebuild): readers keep the old file until the new one
        is complete."""
        self._deferred = True
        try:
            yield
        finally:
            self._deferred = False
            self._render()

    def snapshot(self) -> Any:
        return self.path.read_bytes()

    def close(self) -> None:
        self.store.close()

    # -- rendering ----------------------------------------------------------------

    def _rendered(self) -> int | None:
        row = self.store.conn.execute(
            "SELECT seq FROM jsonl_rendered WHERE path = ?", (str(self.path),)
        ).fetchone()
        return None if row is None else int(row[0])

    def _render(self) -> None:
        if self._deferred:
            return
        checkpoint = self.store.checkpoint()
        write_atomically(self.path, self._lines())
        self.store.conn.execute(
            "INSERT INTO jsonl_rendered (path, seq) VALUES (?, ?) "
            "ON CONFLICT (path) DO UPDATE SET seq = excluded.seq",
            (str(self.path), checkpoint),
        )

    def _lines(self) -> Iterator[bytes]:
        conn = self.store.conn
        nodes = conn.execute(
            "SELECT identity, label, keys, properties, provenance, stub, remapped_from, "
            "updated_at, updated_by FROM state_nodes ORDER BY identity"
        ).fetchall()
        names = _names([(row[0], row[1], orjson.loads(row[2])) for row in nodes])
        loads, dumps = orjson.loads, orjson.dumps
        mesh = self.format == "memorymesh"
        for identity, label, keys, properties, provenance, stub, remapped, at, by in nodes:
            extra = {
                "written_by": by,
                "last_updated": at,
                "schema_remap_from": remapped,
                "stub": True if stub else None,
            }
            lines = metadata(loads(properties), loads(keys), loads(provenance), extra)
            name = names[identity]
            if mesh:
                record = {"type": "node", "name": name, "nodeType": label, "metadata": lines}
            else:
                record = {
                    "type": "entity",
                    "name": name,
                    "entityType": label,
                    "observations": lines,
                }
            yield dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
        edges = conn.execute(
            "SELECT type, from_identity, to_identity, provenance FROM state_relationships "
            "ORDER BY identity"
        )
        for rtype, start, end, provenance in edges:
            ends = {"from": names[start], "to": names[end]}
            if mesh:
                weight = loads(provenance).get("confidence")
                record = {"type": "edge", **ends, "edgeType": rtype, "weight": weight}
            else:
                record = {"type": "relation", **ends, "relationType": rtype}
            yield dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def _names(nodes: list[tuple[str, str, dict[str, Any]]]) -> dict[str, str]:
    """Both formats name nodes by one string: the single key's value, qualified by the label
    when two nodes would share it, and the whole identity for multi-key nodes."""

    def plain(keys: dict[str, Any], identity: str) -> str:
        if "name" in keys:
            return _text(keys["name"])
        return _text(next(iter(keys.values()))) if len(keys) == 1 else identity

    first = {identity: plain(keys, identity) for identity, _, keys in nodes}
    taken = Counter(first.values())
    return {
        identity: f"{first[identity]} ({label})" if taken[first[identity]] > 1 else first[identity]
        for identity, label, _ in nodes
    }
