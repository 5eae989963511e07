"""The gate's current schema snapshot, swapped atomically on refresh."""

from __future__ import annotations

import threading

from writegate.gate.schema.sources import LoadedSchema, SchemaSource, SchemaSourceUnavailable


class SchemaCache:
    """Holds one ``LoadedSchema``; readers take the reference once per write, so a write in
    flight finishes against the snapshot it started with, whatever refresh does meanwhile."""

    def __init__(self, source: SchemaSource) -> None:
        self.source = source
        self._current: LoadedSchema | None = None
        self._refresh_lock = threading.Lock()

    def current(self) -> LoadedSchema:
        snapshot = self._current
        if snapshot is None:
            snapshot = self.refresh()
        return snapshot

    def refresh(self) -> LoadedSchema:
        """Load a new snapshot and swap it in; on failure keep the old one and re-raise."""
        with self._refresh_lock:
            snapshot = self.source.load()  # raises SchemaSourceUnavailable, nothing swapped
            self._current = snapshot
            return snapshot

    @property
    def has_snapshot(self) -> bool:
        return self._current is not None


__all__ = ["SchemaCache", "SchemaSourceUnavailable"]
