"""The gate's current schema snapshot, swapped atomically on refresh."""

from __future__ import annotations

import threading
import time

from writegate.eventlog import Log
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.schema.sources import (
    SCHEMA_STREAM,
    LoadedSchema,
    SchemaSource,
    SchemaSourceUnavailable,
)

QUIET_SECONDS = 5.0
"""How long writes are answered from a source that could not be reached before it is asked
again: each attempt may wait a whole connect timeout, and one write reads the schema more
than once (its limits, then its snapshot). An explicit refresh always asks."""


class SchemaCache:
    """Holds one ``LoadedSchema``; readers take the reference once per write, so a write in
    flight finishes against the snapshot it started with, whatever refresh does meanwhile."""

    def __init__(self, source: SchemaSource) -> None:
        self.source = source
        self._current: LoadedSchema | None = None
        self._refresh_lock = threading.Lock()
        self._unreached: tuple[float, str] | None = None  # when, and why, it last was

    def current(self) -> LoadedSchema:
        """The snapshot, loaded on first use (a source that could not be reached is not
        asked again for ``QUIET_SECONDS``)."""
        snapshot = self._current
        if snapshot is None:
            snapshot = self._load(explicit=False)
        return snapshot

    def refresh(self) -> LoadedSchema:
        """Load a new snapshot and swap it in; on failure keep the old one and re-raise."""
        return self._load(explicit=True)

    def _load(self, *, explicit: bool) -> LoadedSchema:
        with self._refresh_lock:
            if not explicit:
                if self._current is not None:  # loaded while this waited for the lock
                    return self._current
                unreached = self._unreached
                if unreached is not None and time.monotonic() - unreached[0] < QUIET_SECONDS:
                    raise SchemaSourceUnavailable(
                        f"{unreached[1]} (asked again after {QUIET_SECONDS:g} s)",
                        unreachable=True,
                    )
            try:
                snapshot = self.source.load()  # nothing swapped if it raises
            except SchemaSourceUnavailable as exc:
                self._unreached = (time.monotonic(), str(exc)) if exc.unreachable else None
                raise
            self._current, self._unreached = snapshot, None
            return snapshot

    def catch_up(self, log: Log) -> bool:
        """Load the log's newest schema if this snapshot is not it (one probe of the
        ``schema`` stream's version); whether it did. For a refusal about to be given from
        the snapshot — a tool its catalog lacks — that a schema published elsewhere may undo."""
        snapshot = self._current
        if snapshot is None or snapshot.stream_version is None:
            return False
        try:
            if log.stream_version(SCHEMA_STREAM) == snapshot.stream_version:
                return False
            self.refresh()
        except Exception:  # the log or the schema unreadable: the refusal stands as it is
            return False
        return True

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


__all__ = ["QUIET_SECONDS", "SchemaCache", "SchemaSourceUnavailable", "unavailable"]
