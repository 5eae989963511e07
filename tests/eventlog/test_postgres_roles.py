"""The README's role setup, pasted: the application role appends, reads, keeps the state
model and records refusals, and can rewrite no history — not even with the triggers gone."""

from __future__ import annotations

import psycopg
import pytest

from tests.readme import blocks, section
from writegate.eventlog import Actor
from writegate.eventlog.postgres import PostgresEventLog
from writegate.eventlog.testing import emitting, note
from writegate.gate.rejections import RejectionLog
from writegate.projections.state import StateProjection


def _role_setup() -> str:
    [sql] = blocks(section("## The log on PostgreSQL").split("**Roles.**", 1)[1], "sql")
    return sql


def test_the_app_role_appends_but_cannot_rewrite(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn, inline=[StateProjection()]) as owner:  # `init`, as the owner
        owner.append(Actor(agent="ada"), emitting(note("first")))
        RejectionLog(owner).install()
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS writegate_app")
        admin.execute(_role_setup().encode())
    app_dsn = pg_dsn.replace("postgres@", "writegate_app@", 1)
    with PostgresEventLog(app_dsn, inline=[StateProjection()], create=False) as app:
        app.append(Actor(agent="bob"), emitting(note("second")))
        rejections = RejectionLog(app)
        rejections.record(Actor(agent="bob"), "write_node", "SCHEMA_UNKNOWN_LABEL", "no", {})
        assert rejections.count() == 1
        assert app.verify().ok
    with psycopg.connect(app_dsn, autocommit=True) as intruder:
        for sql in (
            "UPDATE events SET payload = '{}'",
            "DELETE FROM events",
            "TRUNCATE events",
            "DELETE FROM idempotency",
            "ALTER TABLE events DISABLE TRIGGER USER",
            "DROP TRIGGER events_no_update ON events",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                intruder.execute(sql.encode())
