"""What ``graph_query`` answers: ranked triplets, each with its provenance and why it ranked.

On the wire the fields are spelled as the Graph MCP Tools page spells ``graph_query``'s
(``sourceEntity``, ``relevanceScore``, ``topK``): agents written against that page read them
as they expect. A node is named twice: ``sourceEntity`` is its identity (``Label{"key":…}``,
what the command line's NODE takes), ``source`` its ``{label, merge_keys}``, what
``open_nodes`` and ``neighbors`` take, so the next read needs no parsing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from writegate.gate.models import NodeRef
from writegate.language import Authority
from writegate.language.observations import passage_of

WIRE = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True)


class TripletProvenance(BaseModel):
    """The write that last set the relationship: leads, through ``audit``, to its event."""

    model_config = WIRE

    event_id: str
    seq: int
    observation_ids: list[str]  # the observations the write cites (none before observations)
    agent: str
    session: str | None
    source: str
    method: str  # the extraction method
    confidence: float
    decayed_confidence: float | None  # aged by the schema's half-life for the method, now
    recorded_at: str  # record time: when the log learned it
    valid_from: str | None  # valid time, as stated by the writer (a past read: as computed)
    valid_to: str | None
    # corroborated (``gate.corroboration``): its confidence with the support of its distinct
    # sources, by the formula provider's rule (left out: none, or a read at a past time)
    corroborated_confidence: float | None = Field(default=None, exclude_if=lambda v: v is None)
    sources: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    # the write's authority, lowest along its lineage (``gate.authority``): how far to trust
    # it as data (left out: the schema ranked nothing when it was written)
    authority: Authority | None = Field(default=None, exclude_if=lambda v: v is None)


class Why(BaseModel):
    """Why a triplet ranked where it did."""

    model_config = WIRE

    terms: list[str]  # the query's words its ends' or its own words begin with
    seed: str  # the seed node it was reached from (an identity)
    hops: int  # relationships from that seed to its far end (1: it touches the seed)
    similarity: float | None  # the embedder's cosine (None: no embedder configured)
    feedback_weight: float | None  # feedback on earlier answers (None: none given)


class Triplet(BaseModel):
    model_config = WIRE

    source_entity: str
    relationship: str
    target_entity: str
    relevance_score: float
    source: NodeRef
    target: NodeRef
    provenance: TripletProvenance
    why: Why


class Seed(BaseModel):
    """A node the query's words found, whether or not it has relationships."""

    model_config = WIRE

    entity: str  # its identity
    node: NodeRef
    score: float  # its fused rank score
    terms: list[str]  # the query's words its own words begin with
    found_by: list[str]  # the seed sources that ranked it (node_text, relationship_text)


class ObservationMatch(BaseModel):
    """An observation the question found: by its words, its meaning (with an embedder), or
    being said next to one that was found (``context_of``, ``places`` away). A document is
    found by its passages: each a match of its own, naming the document and its offset."""

    model_config = WIRE

    @model_validator(mode="before")
    @classmethod
    def _passage(cls, data: Any) -> Any:
        """A passage's id says its document and start: filled from it, once, here."""
        if isinstance(data, dict) and "document" not in data:
            cut = passage_of(str(data.get("observation_id", data.get("observationId", ""))))
            if cut is not None:
                return {**data, "document": cut[0], "start": cut[1]}
        return data

    observation_id: str
    score: float
    terms: list[str]  # the query's searched words it holds, as the text index matched them
    text: str
    source: str
    extraction_method: str
    seq: int  # the event that recorded it
    agent: str
    session: str | None
    said_at: str
    recorded_at: str
    confidence: float
    found_by: list[str]  # the rankings that found it itself: observation_text, observation_meaning
    context_of: str | None = None  # the found observation it was said next to, if only that
    places: int | None = None  # how far from it
    # a passage's: the document it is of and its first character's offset there
    document: str | None = Field(default=None, exclude_if=lambda v: v is None)
    start: int | None = Field(default=None, exclude_if=lambda v: v is None)


class AnsweredAt(BaseModel):
    """The log's head when the answer was read: what ``writegate prove`` checks it against."""

    model_config = WIRE

    seq: int
    head_hash: str


class QueryResult(BaseModel):
    """Ranked triplets, the seeds they grew from, and whether a bound cut the answer."""

    model_config = WIRE

    triplets: list[Triplet]
    seeds: list[Seed]
    observations: list[ObservationMatch]
    expansion: str  # how the neighbourhood was ranked (bfs or ppr)
    truncated: bool  # a bound (seeds, neighbours, nodes per hop, triplets) left some out
    # a scoped read's relationships leading from the nodes it names (seeds, triplets' ends)
    # into scopes the caller cannot see, per scope (``gate.reads.scoped``); absent unscoped
    withheld: dict[str, int] | None = Field(default=None, exclude_if=lambda v: v is None)
    answered_at: AnsweredAt | None = Field(default=None, exclude_if=lambda v: v is None)
