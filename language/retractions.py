"""Retraction: taking back what one source, agent, extraction method or observation said.

A retraction (``gate.retraction``) withdraws the supports a criterion names (``Withdrawal``:
a source, an agent, a method, an observation cited, each optionally within a time window)
from every fact whose current version they support. It is appended as one or more
``source.retracted`` events — batches of a few hundred facts, each in a short transaction
of its own, tied by the retraction's id on the stream ``retraction:<id>`` — and each event
records, per fact, what it was and what it becomes (``FactImage``): the read model only
puts the image in place. So a replay reproduces every value and confidence whatever the
formula provider is by then (the confidence a kept fact falls to was computed by the
provider's corroboration rule when the retraction was planned, as a corroboration's is).

What a fact becomes (``RetractedFact.outcome``):

* ``kept``: other supports remain; the fact stays, supported by them, at the confidence
  they give. No new version: the event is on the fact's ``corroboration:`` stream.
* ``reverted``: no support remains; the fact goes back to the version before it (the
  latest earlier version some support not withdrawn holds), as a new version (its
  stream moves, as any write's).
* ``retracted``: no support remains and no earlier version does: the fact is gone (a node
  that still has relationships not withdrawn stays as a stub, as an endpoint would).

``source.unretracted`` is the inverse: each fact the retraction changed and nothing has
changed since is put back as it was (a new version where the retraction made one).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from writegate.language.base import MODEL, Payload, unset


def retraction_stream(retraction: str) -> str:
    return f"retraction:{retraction}"


class Withdrawal(BaseModel):
    """What a retraction takes back: the supports given by all the named (source, agent,
    extraction method, an observation they cite) within the window (``since`` inclusive,
    ``until`` exclusive, ISO-8601 UTC times of the supporting writes)."""

    model_config = MODEL

    source: str | None = Field(default=None, exclude_if=unset)
    agent: str | None = Field(default=None, exclude_if=unset)
    method: str | None = Field(default=None, exclude_if=unset)
    observation: str | None = Field(default=None, exclude_if=unset)
    since: str | None = Field(default=None, exclude_if=unset)
    until: str | None = Field(default=None, exclude_if=unset)


class SupportRecord(BaseModel):
    """One write supporting a fact's version (a ``state_support`` row), as the image holds it."""

    model_config = MODEL

    seq: int
    kind: str  # written | corroborated
    version: int
    agent: str
    source: str
    method: str
    reliability: float
    confidence: float  # the write's own
    corroborated: float  # the fact's, with this support (by the provider's rule)
    observations: list[str]
    valid_from: str | None = None
    valid_to: str | None = None
    occurred_at: str


class SetBy(BaseModel):
    """Who set one value a fact holds (a ``state_facts`` row); ``provenance`` is None where
    the write that set it is the fact's last (``seq`` is the image's ``updated_seq``): then
    it is the image's own, not said twice."""

    model_config = MODEL

    property: str
    seq: int
    agent: str
    provenance: dict[str, Any] | None = None


class FactImage(BaseModel):
    """A node's or relationship's row in the read model, who set each value and what
    supports it: everything a retraction takes away or an unretraction puts back."""

    model_config = MODEL  # every field stored, nulls too: no field asks whether to be left out

    properties: dict[str, Any]
    provenance: dict[str, Any] | None  # the last write's, as stored
    version: int
    remapped_from: str | None = None
    created_seq: int
    updated_seq: int
    updated_at: str
    updated_by: str
    # a node's
    label: str | None = None
    keys: dict[str, Any] | None = None
    stub: bool = False
    scope: str | None = None
    resolution_keys: list[str] | None = None
    unsearchable: list[str] | None = None
    # a relationship's
    type: str | None = None
    from_identity: str | None = None
    to_identity: str | None = None
    facts: list[SetBy]
    support: list[SupportRecord]


class RetractedFact(BaseModel):
    """One fact a retraction (or its undoing) changed: as it was, and as it is now (None:
    gone from the read model)."""

    model_config = MODEL

    identity: str
    kind: Literal["node", "relationship"]
    outcome: Literal["kept", "reverted", "retracted"]
    withdrawn: list[int]  # the seqs of the supports taken back
    confidence: float | None  # the fact's confidence now (None: gone)
    before: FactImage | None  # None: not held (an unretraction putting a fact back)
    after: FactImage | None


class SourceRetracted(Payload):
    """One batch of a retraction: the facts it changed, and on the first batch the merges
    it proposed for undoing (never undone here: a reviewer decides)."""

    event_type: ClassVar[str] = "source.retracted"

    retraction: str  # its id: the stream ``retraction:<id>`` holds its batches
    withdrawal: Withdrawal
    reason: str
    batch: int  # 1, 2, …
    facts: list[RetractedFact]
    merges_proposed: list[str] = Field(default_factory=list)  # the merges' ids
    observations: list[str] = Field(default_factory=list)  # the observations taken back

    @property
    def stream(self) -> str:
        return retraction_stream(self.retraction)

    @property
    def subject(self) -> str:
        return self.retraction


class SourceUnretracted(Payload):
    """One batch of a retraction undone: each fact put back (``after``: as the retraction
    found it); ``changed``: the facts written since, left as they are."""

    event_type: ClassVar[str] = "source.unretracted"

    retraction: str
    reason: str
    batch: int
    facts: list[RetractedFact]
    changed: list[str] = Field(default_factory=list)

    @property
    def stream(self) -> str:
        return retraction_stream(self.retraction)

    @property
    def subject(self) -> str:
        return self.retraction


Retraction = SourceRetracted | SourceUnretracted
