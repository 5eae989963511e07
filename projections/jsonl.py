"""The current graph as a JSONL snapshot: MemoryMesh's format (seed 001 §2.4) or the MCP memory
server's, for tools that read those files.

The graph is held in memory (``projections.memory``) and rendered after every applied
batch, swapped in atomically; ``<path>.checkpoint.json`` records the checkpoint. After a
restart the graph is rebuilt from the log up to that checkpoint. Output is deterministic:
nodes sorted by identity, then edges sorted by identity, keys sorted, so the same log gives
the same bytes. Provenance rides in the metadata strings (``"Confidence: 0.675"``,
``"Source: …"``); an edge's ``weight`` is the relationship's confidence.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import orjson

from eventlog import Event, EventLog
from projections.contract import check_batch
from projections.files import write_atomically
from projections.memory import GraphModel

Format = Literal["memorymesh", "mcp-memory"]
FORMATS: tuple[Format, ...] = ("memorymesh", "mcp-memory")


@lru_cache(maxsize=4096)  # a handful of property names, rendered once per node each
def display_name(key: str) -> str:
    """Seed 001's PropertyDisplayName: ``currentLocation`` -> ``Current Location``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).replace("_", " ")
    return " ".join(word[:1].upper() + word[1:] for word in spaced.split())


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
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
    lines = [
        f"{display_name(k)}: {_text(properties[k])}" for k in sorted(properties) if k not in keys
    ]
    for key, value in (
        ("confidence", provenance.get("confidence")),
        ("source", provenance.get("source")),
        ("extraction_method", provenance.get("extraction_method")),
        *extra.items(),
    ):
        if value is not None:
            lines.append(f"{display_name(key)}: {_text(value)}")
    return lines


class JsonlProjector:
    """Needs the log: after a restart its in-memory graph is rebuilt up to the checkpoint."""

    def __init__(
        self, path: str | Path, log: EventLog, name: str = "jsonl", fmt: Format = "memorymesh"
    ) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
        self.name = name
        self.path = Path(path)
        self.log = log
        self.format = fmt
        self.meta_path = self.path.with_name(self.path.name + ".checkpoint.json")
        self.model = GraphModel()
        self._checkpoint = _read_checkpoint(self.meta_path)
        self._deferred = False
        for event in log.iter_events(to_seq=self._checkpoint, batch=256):
            self.model.apply(event)
        self._render()  # whatever a crash interrupted, the file now matches the checkpoint

    def checkpoint(self) -> int:
        return self._checkpoint

    def apply(self, events: Sequence[Event]) -> int:
        check_batch(self.name, self._checkpoint, events)
        if not events:
            return self._checkpoint
        for event in events:
            self.model.apply(event)
        self._checkpoint = max(self._checkpoint, events[-1].seq)
        self._render()
        return self._checkpoint

    def reset(self) -> None:
        self.model.clear()
        self._checkpoint = 0
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
        return None

    # -- rendering ----------------------------------------------------------------

    def _render(self) -> None:
        """The file first, then the checkpoint: a crash between them leaves a checkpoint
        behind the file, and reopening rebuilds to it and renders again."""
        if self._deferred:
            return
        write_atomically(self.path, self._lines())
        write_atomically(self.meta_path, [json.dumps({"checkpoint": self._checkpoint}).encode()])

    def _lines(self) -> Iterator[bytes]:
        nodes, edges = self.model.nodes, self.model.edges
        names = _names(
            [(identity, nodes[identity].label, nodes[identity].keys) for identity in sorted(nodes)]
        )
        dumps, option = orjson.dumps, orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
        mesh = self.format == "memorymesh"
        for identity in sorted(nodes):
            node = nodes[identity]
            extra = {
                "written_by": node.updated_by,
                "last_updated": node.updated_at,
                "schema_remap_from": node.remapped_from,
                "stub": True if node.stub else None,
            }
            lines = metadata(node.properties, node.keys, node.provenance, extra)
            name = names[identity]
            record: dict[str, Any]
            if mesh:
                record = {"type": "node", "name": name, "nodeType": node.label, "metadata": lines}
            else:
                record = {
                    "type": "entity",
                    "name": name,
                    "entityType": node.label,
                    "observations": lines,
                }
            yield dumps(record, option=option)
        for identity in sorted(edges):
            edge = edges[identity]
            ends = {"from": names[edge.start], "to": names[edge.end]}
            if mesh:
                weight = edge.provenance.get("confidence")
                record = {"type": "edge", **ends, "edgeType": edge.type, "weight": weight}
            else:
                record = {"type": "relation", **ends, "relationType": edge.type}
            yield dumps(record, option=option)


def _read_checkpoint(path: Path) -> int:
    try:
        return int(json.loads(path.read_text())["checkpoint"])
    except FileNotFoundError:
        return 0


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
