"""A fact's earlier versions, for a retraction that finds no support left on its latest.

The fact's own events (its stream's and its corroborations') are replayed once, in order,
into a scratch read model, and its image is taken before each event that made a version:
the latest of those still holding a support not withdrawn is the version it goes back to.
Three things keep this linear in the fact's history rather than in the log's:
* the scratch model is copied from one installed once a retraction (SQLite's backup of an
  in-memory database), not installed afresh for every fact;
* an event naming many facts (a retraction's or an unretraction's batch) is read and
  decoded once a retraction, not once for every fact it names;
* such a batch is replayed as the fact's own entry alone, since the scratch model holds
  nothing of the others (the images of 500 facts, read again for each one of them, were a
  retraction's time after an unretraction: 20 facts/s, measured).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from writegate.eventlog import EventCore
from writegate.eventlog.reading import cores_at, stream_seqs
from writegate.eventlog.sql import Sql
from writegate.language import FactImage, SourceRetracted, SourceUnretracted, payload_of
from writegate.projections.state import StateProjection

Left = Callable[[FactImage], FactImage | None]
"""An earlier image, reweighed to the supports not withdrawn (None: none is left)."""

_SHARED = 3  # an event naming this many streams or more names other facts: kept once read
_KEPT = 8  # shared events kept at once (the batches a retraction's cursor is among): bounded


class History:
    """The histories of the facts one retraction reverts, read on its connection."""

    def __init__(self, state: StateProjection) -> None:
        self._state = state
        self._template: sqlite3.Connection | None = None
        self._shared: dict[int, EventCore] = {}  # oldest read first
        self._entries: dict[int, dict[str, EventCore]] = {}  # a batch's, by fact

    def earlier(
        self, conn: Sql, identity: str, kind: str, streams: list[str], left: Left
    ) -> FactImage | None:
        """The latest version before the current one of which ``left`` keeps something,
        as ``left`` makes it; None: there is none (or the fact was another kind then)."""
        stream = streams[0]
        events = self._events(conn, streams)
        makers = [e.seq for e in events if stream in e.streams]
        before: list[FactImage | None] = []  # the image before each maker but the first
        scratch = self._scratch()
        try:
            scratch.execute("BEGIN")
            for event in events:
                if event.seq in makers[1:]:
                    found = self._state.fact_image(scratch, identity)
                    before.append(found[1] if found is not None and found[0] == kind else None)
                self._state.apply_untexted(scratch, self._entry(event, identity))
            scratch.execute("COMMIT")
        finally:
            scratch.close()
        for image in reversed(before):
            if image is None:
                return None
            if (kept := left(image)) is not None:
                return kept
        return None

    def _events(self, conn: Sql, streams: list[str]) -> list[EventCore]:
        seqs = stream_seqs(conn, streams)
        wanted = [seq for seq in seqs if seq not in self._shared]
        read = cores_at(conn, wanted)
        for seq, event in read.items():
            if len(event.streams) >= _SHARED:
                self._shared[seq] = event
        events = [self._shared.get(seq) or read[seq] for seq in seqs]
        while len(self._shared) > _KEPT:
            oldest = next(iter(self._shared))
            del self._shared[oldest]
            self._entries.pop(oldest, None)
        return events

    def _entry(self, event: EventCore, identity: str) -> EventCore:
        """``event`` as far as it concerns ``identity``: a batch of facts as its one entry."""
        if event.seq not in self._shared:
            return event
        if event.seq not in self._entries:
            self._entries[event.seq] = _split(event)
        return self._entries[event.seq].get(identity, event)

    def _scratch(self) -> sqlite3.Connection:
        """An empty read model in memory, copied from the one installed first."""
        if self._template is None:
            self._template = sqlite3.connect(":memory:", isolation_level=None)
            StateProjection().install(self._template)
        scratch = sqlite3.connect(":memory:", isolation_level=None)
        self._template.backup(scratch)
        return scratch

    def close(self) -> None:
        """Let go of the scratch model and the events kept."""
        self._shared.clear()
        self._entries.clear()
        if self._template is not None:
            self._template.close()
            self._template = None


def _split(event: EventCore) -> dict[str, EventCore]:
    """A batch's entries, each as an event of its own (another shared event: none)."""
    payload = payload_of(event)
    if not isinstance(payload, SourceRetracted | SourceUnretracted):
        return {}
    return {
        fact.identity: event.model_copy(
            update={"payload": payload.model_copy(update={"facts": [fact]}).stored()}
        )
        for fact in payload.facts
    }


__all__ = ["History"]
