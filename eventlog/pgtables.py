"""The log's own tables on PostgreSQL, its triggers, and what a role needs of them.

The same tables as SQLite's (``tables``), spelled for PostgreSQL: text keys in the "C"
collation (byte order, as SQLite sorts), and triggers that refuse UPDATE, DELETE and
TRUNCATE of the history and any insert that does not chain. Created once, by ``init`` (the
owner); opening a log never runs them again.
"""

from __future__ import annotations

from writegate.eventlog.canonical import GENESIS_HASH
from writegate.eventlog.pgsql import translate
from writegate.eventlog.sealing import DDL as SEALING_DDL
from writegate.eventlog.sealing import TABLES as SEALING_TABLES
from writegate.eventlog.sql import statements
from writegate.eventlog.tables import APPEND_ONLY_TABLES

TABLES = f"""
CREATE TABLE IF NOT EXISTS writegate_log (format INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq BIGINT PRIMARY KEY,
    event_id TEXT NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    occurred_at TEXT COLLATE "C" NOT NULL,
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
    stream TEXT COLLATE "C" NOT NULL,
    version BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (stream, version)
);
CREATE TABLE IF NOT EXISTS idempotency (
    scope TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    request_hash TEXT NOT NULL,
    first_seq BIGINT NOT NULL,
    last_seq BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE OR REPLACE FUNCTION writegate_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$;
CREATE OR REPLACE FUNCTION writegate_chain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq IS DISTINCT FROM (SELECT COALESCE(MAX(seq), 0) + 1 FROM events)
     OR NEW.prev_hash IS DISTINCT FROM
        COALESCE((SELECT hash FROM events WHERE seq = NEW.seq - 1), '{GENESIS_HASH}') THEN
    RAISE EXCEPTION 'events: seq must be gapless and prev_hash must chain';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER events_gapless_chain BEFORE INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION writegate_chain();
""" + "".join(
    f"""
CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
  FOR EACH ROW EXECUTE FUNCTION writegate_append_only();
CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
  FOR EACH ROW EXECUTE FUNCTION writegate_append_only();
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
  FOR EACH STATEMENT EXECUTE FUNCTION writegate_append_only();"""
    for table in APPEND_ONLY_TABLES
)
# the sealed values' tables, made with the log so that a role without CREATE can seal and forget
TABLES += "".join(f"\n{translate(statement)}" for statement in statements(SEALING_DDL))
TRIGGERS = (
    "events_gapless_chain",
    *(f"{t}_no_{verb}" for t in APPEND_ONLY_TABLES for verb in ("update", "delete", "truncate")),
)
# What a writer's role needs of the log's own tables (of a read model's: SELECT, INSERT,
# UPDATE and DELETE); a reader's needs SELECT alone.
OWN_TABLES = {
    **dict.fromkeys(APPEND_ONLY_TABLES, ("SELECT", "INSERT")),
    "writegate_log": ("SELECT",),
    **dict.fromkeys(SEALING_TABLES, ("SELECT", "INSERT", "DELETE")),
}
KEEP = ("SELECT", "INSERT", "UPDATE", "DELETE")
