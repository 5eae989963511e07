"""A log written by writegate 0.1.0 before the typed event language, and what it replays to.

``projections/contract_history.jsonl`` holds the raw rows (every column, as stored) of
the projection tests' history written at commit bcff521; the ``history-0.1.*`` files
beside it are what that code's projectors made of it. The event-language tests load the
rows into a fresh file without going through the gate and check that today's code
verifies the chain and replays them to the same bytes. Run this module with that commit's
code to regenerate them (``python -m tests.language.golden_log``); today's code must not.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from tests.conftest import FIXTURES, ROOT, SEED_SCHEMA
from tests.projections.history import build_history
from writegate.eventlog import EventLog
from writegate.gate import Gate
from writegate.projections.jsonl import FORMATS, JsonlProjector
from writegate.projections.prov import ProvProjector
from writegate.projections.statestore import StateStore

LOGS = FIXTURES / "logs"
ROWS = ROOT / "projections" / "contract_history.jsonl"  # also the projector contract's
COLUMNS = (
    "seq",
    "event_id",
    "type",
    "occurred_at",
    "actor",
    "streams",
    "payload",
    "provenance",
    "request",
    "idempotency_key",
    "prev_hash",
    "hash",
)


def golden(kind: str) -> Path:
    return LOGS / f"history-0.1.{kind}"


def load_rows(destination: Path) -> None:
    """Write the stored rows into a new log file as they are, the chain trigger checking each."""
    EventLog(destination).close()  # a new, empty log: tables and triggers
    rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
    conn = sqlite3.connect(destination, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        for row in rows:
            conn.execute(
                f"INSERT INTO events ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                [row[c] for c in COLUMNS],
            )
            for stream, version in json.loads(row["streams"]).items():
                conn.execute(
                    "INSERT INTO event_streams (stream, version, seq) VALUES (?, ?, ?)",
                    (stream, version, row["seq"]),
                )
        conn.execute("COMMIT")
    finally:
        conn.close()


def _regenerate() -> None:  # pragma: no cover - run by hand with the old code
    LOGS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "history.db"
        with Gate.open(db) as gate:
            gate.publish_schema(SEED_SCHEMA)
            build_history(gate)
            rows = gate.log.connection().execute(
                f"SELECT {', '.join(COLUMNS)} FROM events ORDER BY seq"
            )
            ROWS.write_text(
                "".join(json.dumps(dict(zip(COLUMNS, r, strict=True))) + "\n" for r in rows)
            )
            events = list(gate.log.iter_replayed())
            for fmt in FORMATS:
                out = Path(scratch) / f"{fmt}.jsonl"
                projector = JsonlProjector(out, gate.log, "snapshot", fmt)
                projector.apply(events)
                projector.close()
                golden(f"{fmt}.jsonl").write_bytes(out.read_bytes())
            prov = ProvProjector(Path(scratch) / "prov.nt", "prov")
            prov.apply(events)
            prov.close()
            golden("prov.nt").write_bytes((Path(scratch) / "prov.nt").read_bytes())
            state = StateStore(Path(scratch) / "state.db")
            state.apply(events)
            golden("state.json").write_text(json.dumps(state.snapshot(), indent=1) + "\n")
            state.close()


if __name__ == "__main__":
    _regenerate()
