"""The state read model as a standalone projection in its own SQLite file.

The gate keeps a state model inside the log's file (inline, same transaction as the
append). This is the same ``StateProjection`` pointed at another file: useful as the
store behind the JSONL snapshot, for ``--as-of`` copies, and as the reference projector
of the contract suite. Each ``apply`` is one transaction with its checkpoint.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from writegate.eventlog import EventCore
from writegate.projections.contract import check_batch
from writegate.projections.files import make_private
from writegate.projections.state import StateProjection


class StateStore:
    def __init__(self, path: str | Path, name: str = "state") -> None:
        self.name = name
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        make_private(self.path)  # the policy of every projection file (projections.files)
        self._state = StateProjection()
        self._state.name = name
        self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute("BEGIN IMMEDIATE")
        self._state.install(self.conn)
        self.conn.execute("COMMIT")

    def checkpoint(self) -> int:
        return self._state.checkpoint(self.conn)

    def apply(self, events: Sequence[EventCore]) -> int:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            checkpoint = self._state.checkpoint(self.conn)
            check_batch(self.name, checkpoint, events)
            for event in events:
                self._state.apply_event(self.conn, event)
            if events and events[-1].seq > checkpoint:
                checkpoint = events[-1].seq
                self._state.set_checkpoint(self.conn, checkpoint)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return checkpoint

    def reset(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        self._state.reset(self.conn)
        self.conn.execute("COMMIT")

    def snapshot(self) -> Any:
        return self._state.snapshot(self.conn)

    def close(self) -> None:
        self.conn.close()
