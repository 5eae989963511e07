"""The current graph as a JSONL snapshot: MemoryMesh's format (seed 001 §2.4) or the MCP memory
server's, for tools that read those files.

The graph is held in memory (``projections.jsonl_model``) and rendered after every applied
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

from writegate.eventlog import EventCore, Log
from writegate.eventlog.events import format_timestamp
from writegate.projections.contract import check_batch
from writegate.projections.files import write_atomically
from writegate.projections.jsonl_model import CITED, GraphModel, NodeRecord

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


def property_lines(properties: dict[str, Any], keys: dict[str, Any]) -> list[str]:
    """``Key: Value`` strings for the properties that are not merge keys (the name says those)."""
    return [
        f"{display_name(k)}: {_text(v)}" for k, v in sorted(properties.items()) if k not in keys
    ]


def origin_lines(node: NodeRecord) -> list[str]:
    """``Key: Value`` strings saying where the node's latest fact came from."""
    fields = {
        **dict(zip(CITED, node.cited, strict=True)),
        "written_by": node.updated_by,
        "last_updated": format_timestamp(node.updated_at),
        "schema_remap_from": node.remapped_from,
        "stub": True if node.stub else None,
    }
    return [f"{display_name(k)}: {_text(v)}" for k, v in fields.items() if v is not None]


class JsonlProjector:
    """Needs the log: after a restart its in-memory graph is rebuilt up to the checkpoint."""

    def __init__(
        self, path: str | Path, log: Log, name: str = "jsonl", fmt: Format = "memorymesh"
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
        for event in log.iter_replayed(to_seq=self._checkpoint):
            self.model.apply(event)
        self._render()  # whatever a crash interrupted, the file now matches the checkpoint

    def checkpoint(self) -> int:
        return self._checkpoint

    def apply(self, events: Sequence[EventCore]) -> int:
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
        """Records with their keys already in sorted order, so the bytes are deterministic
        without asking the encoder to sort every object."""
        nodes, edges = self.model.nodes, self.model.edges
        order = sorted(nodes)
        names = _names(nodes, order)
        # Nodes written together share their origin lines: render those once.
        origins: dict[tuple[Any, ...], list[str]] = {}
        dumps, option = orjson.dumps, orjson.OPT_APPEND_NEWLINE
        mesh = self.format == "memorymesh"
        for identity in order:
            node = nodes[identity]
            origin = (node.cited, node.updated_by, node.updated_at, node.remapped_from, node.stub)
            cited = origins.get(origin)
            if cited is None:
                cited = origins[origin] = origin_lines(node)
            lines = property_lines(node.properties, node.keys) + cited
            if mesh:
                record: dict[str, Any] = {
                    "metadata": lines,
                    "name": names[identity],
                    "nodeType": node.label,
                    "type": "node",
                }
            else:
                record = {
                    "entityType": node.label,
                    "name": names[identity],
                    "observations": lines,
                    "type": "entity",
                }
            yield dumps(record, option=option)
        for identity in sorted(edges):
            edge = edges[identity]
            if mesh:
                record = {
                    "edgeType": edge.type,
                    "from": names[edge.start],
                    "to": names[edge.end],
                    "type": "edge",
                    "weight": edge.confidence,
                }
            else:
                record = {
                    "from": names[edge.start],
                    "relationType": edge.type,
                    "to": names[edge.end],
                    "type": "relation",
                }
            yield dumps(record, option=option)


def _read_checkpoint(path: Path) -> int:
    try:
        return int(json.loads(path.read_text())["checkpoint"])
    except FileNotFoundError:
        return 0


def _names(nodes: dict[str, NodeRecord], order: list[str]) -> dict[str, str]:
    """Both formats name nodes by one string: the single key's value, qualified by the label
    when two nodes would share it, and the whole identity for multi-key nodes."""

    def plain(keys: dict[str, Any], identity: str) -> str:
        if "name" in keys:
            return _text(keys["name"])
        return _text(next(iter(keys.values()))) if len(keys) == 1 else identity

    first = {identity: plain(nodes[identity].keys, identity) for identity in order}
    taken = Counter(first.values())
    if len(taken) == len(first):
        return first
    return {
        identity: f"{name} ({nodes[identity].label})" if taken[name] > 1 else name
        for identity, name in first.items()
    }
