"""Moving an existing agent memory under the gate: every imported item is a gated write.

Two formats of JSONL memory files are read:

* the official MCP memory server's (``{"type":"entity","name","entityType","observations"}``,
  ``{"type":"relation","from","to","relationType"}``);
* MemoryMesh's (``{"type":"node","name","nodeType","metadata"}``,
  ``{"type":"edge","from","to","edgeType","weight"}``), whose ``*.schema.json`` files
  ``gate.memorymesh.memorymesh_schema`` turns into a writegate schema document.

The rule for observations / metadata: a string ``Key: Value`` whose key names a property the
schema declares for the entity's label — as written, or written another way (``Current
Location``, ``currentLocation`` and ``current_location`` name the same property) — becomes
that property, under the schema's own name (converted to its declared type; arrays split on
``", "``); every other string is kept, in order, in the node's ``observations`` list. An
entity is ``label = entityType``, ``merge_keys = {"name": name}``; a relation's type is
upper snake case (``works at`` → ``WORKS_AT``), its endpoints' labels come from the file's
own entities (else the schema's fallback label), and missing endpoints become stubs. Edge
``weight`` becomes a relationship property.

Writes go in batches through ``Gate.write_batch``: one rejected item is reported with its
line number and the batch is retried without it, so one bad line never stops the rest.
Each batch's idempotency key is derived from the file's digest and its lines, so running
the same import again appends nothing. ``dry_run`` rehearses every batch and rolls it back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Actor
from writegate.eventlog.bulk import bulk
from writegate.gate.api import Gate
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import BatchResult, Rejected, WriteNodeResult, WriteRelationshipResult
from writegate.gate.schema import SchemaRegistry

Format = Literal["mcp-memory", "memorymesh"]
CHUNK = 2000
_OUT = ConfigDict(extra="forbid")


class LineProblem(BaseModel):
    model_config = _OUT

    line: int
    error_code: str
    message: str


class ImportSummary(BaseModel):
    model_config = _OUT

    file: str
    format: Format
    dry_run: bool
    lines: int
    items: int
    accepted: int
    remapped: int
    resolved: int  # items entity resolution landed on existing nodes (seed 004's mergedCount)
    rejected: int
    malformed: int
    events_appended: int
    problems: list[LineProblem] = Field(default_factory=list)


@dataclass
class Item:
    line: int
    op: dict[str, Any]


def snake(key: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key.strip())
    return re.sub(r"[^A-Za-z0-9]+", "_", spaced).strip("_").lower()


def relationship_type(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name.strip()).strip("_").upper()


def _typed(text: str, spec: Any) -> Any:
    kind = getattr(spec, "type", None)
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        return text  # the gate will say SCHEMA_TYPE_MISMATCH
    if kind == "boolean":
        return {"true": True, "false": False}.get(text.lower(), text)
    if kind == "array":
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


class _Translator:
    """File records to gate batch items, with the observation rule above."""

    def __init__(self, registry: SchemaRegistry | None, common: dict[str, Any]) -> None:
        self.registry = registry
        self.common = common
        self.labels: dict[str, str] = {}

    def _entry(self, label: str) -> Any:
        if self.registry is None:
            return None
        entry = self.registry.get_entry(label)
        if entry is None and (target := self.registry.remap_target(label)):
            entry = self.registry.get_entry(target)
        return entry

    def node(self, name: Any, label: Any, notes: Any) -> dict[str, Any]:
        if not isinstance(name, str) or not name or not isinstance(label, str) or not label:
            raise ValueError("an entity needs a non-empty string name and type")
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise ValueError("observations/metadata must be a list of strings")
        self.labels.setdefault(name, label)
        entry = self._entry(label)
        declared = dict(entry.properties) if entry is not None else {}
        spelled = {snake(prop): prop for prop in declared}
        properties: dict[str, Any] = {}
        kept: list[str] = []
        for note in notes:
            key, sep, value = note.partition(":")
            prop = (
                (key.strip() if key.strip() in declared else spelled.get(snake(key)))
                if sep
                else None
            )
            if prop is not None and prop != "name":
                properties[prop] = _typed(value.strip(), declared[prop])
            else:
                kept.append(note)
        if kept:
            properties["observations"] = kept
        return {
            "op": "write_node",
            "label": label,
            "merge_keys": {"name": name},
            "properties": properties,
            **self.common,
        }

    def edge(self, start: Any, end: Any, rtype: Any, weight: Any = None) -> dict[str, Any]:
        if not all(isinstance(v, str) and v for v in (start, end, rtype)):
            raise ValueError("a relation needs non-empty string from, to and type")
        fallback = self.registry.fallback_label() if self.registry is not None else None
        labels = [self.labels.get(n, fallback) for n in (start, end)]
        if None in labels:
            missing = [n for n, label in zip((start, end), labels, strict=True) if label is None]
            raise ValueError(f"no entity named {missing} in the file and no fallback label")
        properties = {"weight": weight} if isinstance(weight, int | float) else {}
        return {
            "op": "write_relationship",
            "type": relationship_type(rtype),
            "from_label": labels[0],
            "from_keys": {"name": start},
            "to_label": labels[1],
            "to_keys": {"name": end},
            "endpoint_policy": "merge_endpoints",
            "properties": properties,
            **self.common,
        }


def _records(path: Path) -> Iterator[tuple[int, Any]]:
    """Each line's record, or what is wrong with it (not UTF-8, not JSON): a line is
    reported, never the whole file refused."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, ValueError(f"not UTF-8 (byte {exc.start + 1} of the line)")
                continue
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, exc


def read_items(
    path: Path, fmt: Format, registry: SchemaRegistry | None, common: dict[str, Any]
) -> tuple[list[Item], list[LineProblem], int]:
    """Entities first (so relations know their endpoints' labels), then relations."""
    translate = _Translator(registry, common)
    nodes, edges, problems, lines = [], [], [], 0
    node_kind, edge_kind = ("entity", "relation") if fmt == "mcp-memory" else ("node", "edge")
    pending_edges: list[tuple[int, dict[str, Any]]] = []
    for number, record in _records(path):
        lines = number
        if isinstance(record, Exception):
            problems.append(
                LineProblem(line=number, error_code="MALFORMED_LINE", message=str(record))
            )
            continue
        kind = record.get("type") if isinstance(record, dict) else None
        try:
            if kind == node_kind:
                notes = record.get("observations" if fmt == "mcp-memory" else "metadata", [])
                label = record.get("entityType" if fmt == "mcp-memory" else "nodeType")
                nodes.append(Item(number, translate.node(record.get("name"), label, notes)))
            elif kind == edge_kind:
                pending_edges.append((number, record))
            else:
                raise ValueError(f"'type' must be {node_kind!r} or {edge_kind!r}")
        except ValueError as exc:
            problems.append(LineProblem(line=number, error_code="MALFORMED_LINE", message=str(exc)))
    for number, record in pending_edges:
        rtype = record.get("relationType" if fmt == "mcp-memory" else "edgeType")
        try:
            op = translate.edge(record.get("from"), record.get("to"), rtype, record.get("weight"))
            edges.append(Item(number, op))
        except ValueError as exc:
            problems.append(LineProblem(line=number, error_code="MALFORMED_LINE", message=str(exc)))
    return nodes + edges, problems, lines


def items_in(gate: Gate, path: Path, fmt: Format) -> int:
    """How many items an import of ``path`` writes, or tries to (its total, as a job).
    Raises the refusal ``import_file`` would give a file its schema cannot take, before
    any job starts."""
    try:
        registry: SchemaRegistry | None = gate.current_schema().registry
    except Exception:
        registry = None
    items = read_items(path, fmt, registry, {})[0]
    if fmt == "memorymesh" and registry is not None:
        _refuse_undeclared(items, registry)
    return len(items)


def import_file(
    gate: Gate,
    path: str | Path,
    fmt: Format,
    *,
    extraction_method: str,
    source: str | None = None,
    reliability: float = 0.5,
    actor: Actor | None = None,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
    after: int = 0,
) -> ImportSummary:
    """``progress(items)`` after each batch; ``after``: the items an earlier run of this
    import is known to have written (a resumed job), which this one goes on from. Its
    batches are the earlier run's, so a batch that run wrote but did not report is its
    idempotent retry: nothing is written twice. The summary counts this run's items."""
    path = Path(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    common = {
        "source": source or path.name,
        "extraction_method": extraction_method,
        "reliability": reliability,
    }
    try:
        registry: SchemaRegistry | None = gate.current_schema().registry
    except Exception:
        registry = None
    with bulk():
        return _import(gate, path, fmt, digest, common, registry, actor, dry_run, progress, after)


def _import(
    gate: Gate,
    path: Path,
    fmt: Format,
    digest: str,
    common: dict[str, Any],
    registry: SchemaRegistry | None,
    actor: Actor | None,
    dry_run: bool,
    progress: Callable[[int], None] | None,
    after: int,
) -> ImportSummary:
    items, problems, lines = read_items(path, fmt, registry, common)
    if fmt == "memorymesh" and registry is not None:
        _refuse_undeclared(items, registry)
    accepted = remapped = resolved = appended = 0
    for start in range(after - after % CHUNK, len(items), CHUNK):
        pending = items[start : start + CHUNK]
        while pending:
            key = f"import:{digest}:{pending[0].line}-{pending[-1].line}:{len(pending)}"
            head = gate.log.head()[0]
            result = gate.write_batch(
                items=[i.op for i in pending], idempotency_key=key, actor=actor, dry_run=dry_run
            )
            if isinstance(result, Rejected):
                index = result.details.get("item")
                if not isinstance(index, int):  # not one item's fault: report them all
                    problems += [
                        LineProblem(
                            line=i.line, error_code=result.error_code, message=result.message
                        )
                        for i in pending
                    ]
                    break
                bad = pending.pop(index)
                message = result.message.split(": ", 1)[-1]
                problems.append(
                    LineProblem(line=bad.line, error_code=result.error_code, message=message)
                )
                continue
            accepted += len(pending)
            remapped += _remapped(result)
            resolved += result.resolved
            appended += (
                (result.last_seq - result.first_seq + 1) if dry_run else gate.log.head()[0] - head
            )
            break
        if progress:
            progress(len(items[start : start + CHUNK]))
    problems.sort(key=lambda p: p.line)
    rejected = sum(1 for p in problems if p.error_code != "MALFORMED_LINE")
    return ImportSummary(
        file=str(path),
        format=fmt,
        dry_run=dry_run,
        lines=lines,
        items=len(items),
        accepted=accepted,
        remapped=remapped,
        resolved=resolved,
        rejected=rejected,
        malformed=len(problems) - rejected,
        events_appended=appended,
        problems=problems,
    )


def _refuse_undeclared(items: list[Item], registry: SchemaRegistry) -> None:
    """A MemoryMesh file comes with its own schema: a node type the log's schema neither
    declares nor remaps means that schema was never published here (its import refused, or
    not run), and the file's entities would land on the fallback label of another log's
    schema. Nothing is written then."""
    types = {str(i.op["label"]) for i in items if i.op["op"] == "write_node"}
    missing = sorted(
        t for t in types if registry.get_entry(t) is None and registry.remap_target(t) is None
    )
    if missing:
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_LABEL,
            f"the log's schema declares no label for the file's node type(s) {', '.join(missing)}:"
            " publish the file's schema first (writegate schema import-memorymesh DIR);"
            " nothing was imported",
            {"node_types": missing},
        )


def _remapped(result: BatchResult) -> int:
    return sum(
        1
        for r in result.results
        if isinstance(r, WriteNodeResult | WriteRelationshipResult) and r.remapped_from
    )
