"""The log's tables in SQLite: their DDL, the append-only triggers and the statements on them.

This module owns the ``events``, ``event_streams`` and ``idempotency`` tables: every
other module of the package reads and writes them through the names defined here, and
nothing outside the package touches them at all.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from writegate.eventlog.canonical import GENESIS_HASH
from writegate.eventlog.errors import NotAnEventLog
from writegate.eventlog.sql import run_script

APPLICATION_ID = 0x57474C47  # "WGLG": marks a file as a writegate log
FORMAT_VERSION = 1

CORE_COLUMNS = "seq, event_id, type, occurred_at, actor, streams, payload, provenance"
EVENT_COLUMNS = f"{CORE_COLUMNS}, request, idempotency_key, prev_hash, hash"
INSERT_EVENT = f"INSERT INTO events ({EVENT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
INSERT_STREAM = "INSERT INTO event_streams (stream, version, seq) VALUES (?,?,?)"
INSERT_IDEMPOTENCY = "INSERT INTO idempotency VALUES (?,?,?,?,?)"
FIND_IDEMPOTENCY = (
    "SELECT request_hash, first_seq, last_seq FROM idempotency WHERE scope = ? AND key = ?"
)
STREAM_VERSION = "SELECT MAX(version) FROM event_streams WHERE stream = ?"


def stream_version_of(stream: str) -> str:
    """The version of the stream the SQL expression ``stream`` names, as a scalar subquery
    another part's statement may carry (a read model reading ahead a write's versions)."""
    return f"({STREAM_VERSION.replace('?', stream)})"


HEAD = "SELECT seq, hash, occurred_at FROM events ORDER BY seq DESC LIMIT 1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    streams TEXT NOT NULL,
    payload TEXT NOT NULL,
    provenance TEXT NOT NULL,
    request TEXT NOT NULL,
    idempotency_key TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS event_streams (
    stream TEXT NOT NULL,
    version INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (stream, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS events_gapless_chain BEFORE INSERT ON events
WHEN NEW.seq IS NOT (SELECT IFNULL(MAX(seq), 0) + 1 FROM events)
  OR NEW.prev_hash IS NOT IFNULL((SELECT hash FROM events WHERE seq = NEW.seq - 1), '{genesis}')
BEGIN SELECT RAISE(ABORT, 'events: seq must be gapless and prev_hash must chain'); END;
"""
# Append-only: UPDATE and DELETE fail on every table that records history.
APPEND_ONLY_TABLES = ("events", "event_streams", "idempotency")
_APPEND_ONLY = "".join(
    f"""
CREATE TRIGGER IF NOT EXISTS {table}_no_{verb.lower()} BEFORE {verb} ON {table}
BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;"""
    for table in APPEND_ONLY_TABLES
    for verb in ("UPDATE", "DELETE")
)
APPEND_ONLY_TRIGGERS = tuple(
    f"{table}_no_{verb}" for table in APPEND_ONLY_TABLES for verb in ("update", "delete")
)


def file_format(conn: sqlite3.Connection, path: Path) -> int:
    """The log format of the open file (0: empty, not yet a log); refuses foreign files."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as exc:  # "file is not a database", and the like
        raise NotAnEventLog(f"{path}: {exc}") from exc
    if has_tables and app_id != APPLICATION_ID:
        raise NotAnEventLog(f"{path} is a SQLite file but not a writegate log")
    if has_tables and version == 0:  # a log's tables, its format unset: by hand, not by us
        raise NotAnEventLog(
            f"{path} holds a log's tables but no log format (PRAGMA user_version 0): changed "
            "outside writegate? not opened, nothing made again"
        )
    if version > FORMAT_VERSION:
        raise NotAnEventLog(
            f"{path} has log format {version}; this writegate reads up to {FORMAT_VERSION}"
        )
    return version


def create_tables(conn: sqlite3.Connection) -> None:
    """Set up a new file, inside the caller's transaction. Never run on an existing log:
    re-creating objects on open would quietly repair (and so hide) a dropped trigger."""
    run_script(conn, _SCHEMA.replace("{genesis}", GENESIS_HASH) + _APPEND_ONLY)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {FORMAT_VERSION}")


def missing_triggers(conn: sqlite3.Connection) -> list[str]:
    """Append-only triggers that should exist but do not (someone dropped them)."""
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
    return [t for t in APPEND_ONLY_TRIGGERS if t not in present]
