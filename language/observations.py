"""Observations: the text an agent read or heard (a message, a page, a tool's output), kept
as it was so that the facts extracted from it can name it.

An observation is named by its content — ``obs_`` and the first 32 hex digits of the
SHA-256 of the canonical JSON of its text, source and the time it was said — so the same
text from the same source, said at the same time, is one observation however often it is
recorded (its scope, when one is named, is part of its content). Its event
(``observation.recorded``) is the one event of its stream ``obs:<id>``; a write that cites
it carries the id in its provenance (``WriteProvenance.observations``).

A long text (a document) is kept whole in its one event, with where each of its passages
starts (``passages``, cut by the gate when it was recorded: a replay reads the cuts and
never cuts again). A passage is named ``<id>#<start>``, its first character's offset into
the text; it is what the text index holds of a document and what a fact may cite.
"""

from __future__ import annotations

import hashlib
import re
from typing import ClassVar

from pydantic import Field

from writegate.eventlog import EventCore, canonical_json
from writegate.language.base import Payload, unset

OBSERVATION_ID = re.compile(r"obs_[0-9a-f]{32}")
PASSAGE_ID = re.compile(rf"({OBSERVATION_ID.pattern})#(0|[1-9][0-9]{{0,9}})")
# what a write may cite: an observation or one passage of a document
CITABLE_ID = re.compile(rf"{OBSERVATION_ID.pattern}(?:#(?:0|[1-9][0-9]{{0,9}}))?")


def observation_id(text: str, source: str, said_at: str | None, scope: str | None = None) -> str:
    """The id of the observation of ``text`` from ``source`` said at ``said_at`` (the
    gate's ``format_timestamp`` spelling, or None when the writer gave no time), kept in
    ``scope`` (None: the implicit one, left out so older ids stay as they were; the same
    words kept in two scopes are two observations, so neither tells of the other)."""
    named: dict[str, str | None] = {"said_at": said_at, "source": source, "text": text}
    body = canonical_json(named if scope is None else {**named, "scope": scope})
    return "obs_" + hashlib.sha256(body).hexdigest()[:32]


def observation_stream(observation: str) -> str:
    return "obs:" + observation


def passage_id(observation: str, start: int) -> str:
    """The id of the passage of ``observation`` starting at character ``start``."""
    return f"{observation}#{start}"


def passage_of(cited: str) -> tuple[str, int] | None:
    """The document and start a passage id names (None: not a passage's id)."""
    found = PASSAGE_ID.fullmatch(cited)
    return (found[1], int(found[2])) if found is not None else None


def document_of(cited: str) -> str:
    """The observation a cited id is of: itself, or a passage's document."""
    return cited.partition("#")[0]


class ObservationRecorded(Payload):
    """An observation kept: its text as given, when it was said or valid (unset: when it
    was recorded, the event's time), and the conversation the writer says it belongs to
    (the authenticated session is the event's actor's). Source, method and confidence
    are the event's provenance, as for any write."""

    event_type: ClassVar[str] = "observation.recorded"

    observation: str  # its id
    text: str
    said_at: str | None = Field(default=None, exclude_if=unset)
    session: str | None = Field(default=None, exclude_if=unset)
    # the scope it is kept in (``language.scopes``; unset: the implicit one, left out so
    # older events hash as they did)
    scope: str | None = Field(default=None, exclude_if=unset)
    # where each passage of a document starts, the first at 0 (unset: one passage, left
    # out so a short text's event is as it was)
    passages: list[int] | None = Field(default=None, exclude_if=unset)

    @property
    def stream(self) -> str:
        return observation_stream(self.observation)

    @property
    def subject(self) -> str:
        return self.observation

    def spans(self) -> list[tuple[int, int]]:
        """Each passage's (start, end) in the text, as the event cut it; none for a text kept
        as one passage or forgotten (a start out of order or past the end is not one)."""
        text = self.text or ""
        starts = sorted({s for s in self.passages or () if 0 <= s < len(text)} | {0})
        if not self.passages or not text or len(starts) < 2:
            return []
        return list(zip(starts, [*starts[1:], len(text)], strict=True))


def cited_observations(event: EventCore) -> list[str]:
    """The observations a write's provenance cites (none: an empty list). Read on every
    write a replay applies, so straight from the stored provenance."""
    provenance = event.provenance
    cited = provenance.get("observations") if provenance else None
    return list(cited) if cited else []
