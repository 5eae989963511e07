"""What every payload is — a frozen model stored by its aliases, unset fields left out —
and a write's provenance, which every kind of event may carry.

Shared by the payload modules (``payloads``: the graph, the schema and the review lane;
``merges``: merged and unmerged nodes; ``feedback``: feedback on an answer), so each
stays small and none imports the other's event types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from writegate.eventlog.events import trusted

MODEL = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def unset(value: object) -> bool:
    return value is None


class Payload(BaseModel):
    """What one event says happened; ``event_type`` is the type the log records it under."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    event_type: ClassVar[str]

    def stored(self) -> dict[str, Any]:
        """The payload as the log stores it (JSON-ready, aliases, unset markers left out)."""
        return self.model_dump(mode="json", by_alias=True)

    @property
    def subject(self) -> str:
        """What the event is about, in one string (an identity, a schema version)."""
        return ""


class Authority(BaseModel):
    """How far the schema's ``authority`` ranks a write, computed by the gate when it was
    written (``gate.authority``): the lowest rank along its lineage, and what set it."""

    model_config = MODEL

    rank: int  # higher: more authority
    by: str  # what set it: ``method <m>`` or ``source <s>``
    # the cited observation it came through (unset: the write's own method or source)
    via: str | None = Field(default=None, exclude_if=unset)


class Superseded(BaseModel):
    """A fact a write replaced, kept in the event that replaced it: the value (a property's,
    or for a functional relationship the superseded relationship's identity) and who had
    set it, at what confidence. Nothing a write supersedes is lost."""

    model_config = MODEL

    property: str | None = None  # None: a whole relationship (of a functional type)
    value: JsonValue = None  # the property's value; a relationship's identity
    seq: int  # the event that had set it
    agent: str
    confidence: float | None
    source: str | None
    extraction_method: str | None
    # the authority it was written with (unset: the schema ranked none when it was written)
    authority: Authority | None = Field(default=None, exclude_if=unset)


class GraphPayload(Payload):
    """A change to the graph; ``batch_item`` numbers it within the batch it came in."""

    batch_item: int | None = Field(default=None, exclude_if=unset)


class WriteProvenance(BaseModel):
    """Where a write's claim came from and how far to trust it: declared by the writer
    (``source``, ``extraction_method``, ``reliability``), computed by the gate (the rest)."""

    model_config = MODEL

    source: str
    extraction_method: str
    reliability: float
    confidence: float
    formula: str
    write_gate_version: str
    schema_version: str
    # the observations (``language.observations``) the claim was extracted from, as cited
    observations: list[str] | None = Field(default=None, exclude_if=unset)
    # the lowest authority along its lineage (``gate.authority``; unset: the schema ranks
    # none), so neither replay nor a read recomputes it, and a later schema rewrites nothing
    authority: Authority | None = Field(default=None, exclude_if=unset)

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @classmethod
    def read(cls, stored: Mapping[str, Any]) -> WriteProvenance:
        """The provenance the log stored, without validating it again (the log wrote and
        hashed it); a field left out when unset reads as None."""
        values = {name: stored.get(name) for name in cls.model_fields}
        if values["authority"] is not None:  # rare: validated, it is small
            values["authority"] = Authority.model_validate(values["authority"])
        return trusted(cls, values)
