"""The gate's current schema snapshot, swapped atomically on refresh."""

from __future__ import annotations

import threading

from writegate.gate.errors import ErrorCode, GateRejection
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

    def for_write(self) -> LoadedSchema:
        """``current()``, or the refusal a write gets when there is no schema to check it."""
        try:
            return self.current()
        except SchemaSourceUnavailable as exc:
            raise unavailable(exc, False) from exc

    def reloaded(self) -> LoadedSchema:
        """``refresh()``, or the refusal a write gets when the new schema cannot be read."""
        try:
            return self.refresh()
        except SchemaSourceUnavailable as exc:
            raise unavailable(exc, True) from exc

    @property
    def has_snapshot(self) -> bool:
        return self._current is not None


def unavailable(exc: SchemaSourceUnavailable, kept: bool) -> GateRejection:
    """``SCHEMA_SOURCE_UNAVAILABLE``, saying whether the previous snapshot keeps serving."""
    return GateRejection(
        ErrorCode.SCHEMA_SOURCE_UNAVAILABLE, str(exc), {"previous_snapshot_kept": kept}
    )


__all__ = ["SchemaCache", "SchemaSourceUnavailable", "unavailable"]
