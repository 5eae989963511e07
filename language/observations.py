"""Observations: the text an agent read or heard (a message, a page, a tool's output), kept
as it was so that the facts extracted from it can name it.

An observation is named by its content — ``obs_`` and the first 32 hex digits of the
SHA-256 of the canonical JSON of its text, source and the time it was said — so the same
text from the same source, said at the same time, is one observation however often it is
recorded (its scope, when one is named, is part of its content). Its event
(``observation.recorded``) is the one event of its stream ``obs:<id>``; a write that cites
it carries the id in its provenance (``WriteProvenance.observations``).
"""

from __future__ import annotations

import hashlib
import re
from typing import ClassVar

from pydantic import Field

from writegate.eventlog import EventCore, canonical_json
from writegate.language.base import Payload, unset

OBSERVATION_ID = re.compile(r"obs_[0-9a-f]{32}")


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

    @property
    def stream(self) -> str:
        return observation_stream(self.observation)

    @property
    def subject(self) -> str:
        return self.observation


def cited_observations(event: EventCore) -> list[str]:
    """The observations a write's provenance cites (none: an empty list). Read on every
    write a replay applies, so straight from the stored provenance."""
    provenance = event.provenance
    cited = provenance.get("observations") if provenance else None
    return list(cited) if cited else []
