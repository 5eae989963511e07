"""The JSONL model's records — a node or a relationship as a batch left it — and those a
retraction's images make (``language.retractions``: the fact as its image after says, its
corroboration's strings from the supports the image keeps)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from writegate.eventlog.events import parse_timestamp
from writegate.language import RetractedFact, WriteProvenance
from writegate.projections.jsonl_lines import heard_lines


@dataclass(slots=True)
class NodeRecord:
    """A node as a batch left it, before it is written back."""

    label: str
    keys: dict[str, Any]
    properties: dict[str, Any]
    cited: tuple[Any, ...]
    stub: bool
    remapped_from: str | None
    resolved_from: str | None
    updated_at: datetime
    updated_by: str
    heard: list[str] | None = None  # its corroboration's strings (``heard_lines``)


@dataclass(slots=True)
class EdgeRecord:
    type: str
    start: str
    end: str
    properties: dict[str, Any]
    confidence: Any


def cited(provenance: WriteProvenance | None) -> tuple[Any, ...]:
    """The provenance a snapshot shows (``jsonl_lines.CITED``), in that order."""
    if provenance is None:
        return (None, None, None)
    return (provenance.confidence, provenance.source, provenance.extraction_method)


def _heard(fact: RetractedFact) -> tuple[float, list[str]] | None:
    """The corroborated confidence and sources the image's supports give (None: none)."""
    image = fact.after
    if image is None or not any(s.kind == "corroborated" for s in image.support):
        return None
    return image.support[-1].corroborated, list(dict.fromkeys(s.source for s in image.support))


def node_record(fact: RetractedFact, resolved_from: str | None) -> NodeRecord | None:
    """The node as a retraction (or its undoing) left it; None: gone."""
    image = fact.after
    if image is None:
        return None
    provenance = image.provenance
    heard = _heard(fact)
    return NodeRecord(
        image.label or "",
        dict(image.keys or {}),
        dict(image.properties),
        cited(WriteProvenance.model_validate(provenance) if provenance else None),
        image.stub,
        image.remapped_from,
        resolved_from,
        parse_timestamp(image.updated_at),
        image.updated_by,
        heard_lines(*heard) if heard else None,
    )


def edge_record(fact: RetractedFact) -> EdgeRecord | None:
    """The relationship as a retraction (or its undoing) left it; None: gone."""
    image = fact.after
    if image is None:
        return None
    heard = _heard(fact)
    provenance = WriteProvenance.model_validate(image.provenance) if image.provenance else None
    own = provenance.confidence if provenance is not None else None
    return EdgeRecord(
        image.type or "",
        image.from_identity or "",
        image.to_identity or "",
        dict(image.properties),
        heard[0] if heard else own,
    )
