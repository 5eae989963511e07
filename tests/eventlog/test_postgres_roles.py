"""The README's role setup, pasted: the application role appends, reads, keeps the state
model and records refusals, and can rewrite no history — not even with the triggers gone."""

from __future__ import annotations

import psycopg
import pytest

from tests.postgres import create_app_role
from writegate.eventlog import Actor
from writegate.eventlog.postgres import PostgresEventLog
from writegate.eventlog.testing import emitting, note
from writegate.gate.rejections import RejectionLog
from writegate.projections.state import StateProjection


def test_the_app_role_appends_but_cannot_rewrite(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn, inline=[StateProjection()]) as owner:  # `init`, as the owner
        owner.append(Actor(agent="ada"), emitting(note("first")))
        RejectionLog(owner).install()
    app_dsn = create_app_role(pg_dsn)
    with PostgresEventLog(app_dsn, inline=[StateProjection()]) as app:
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
            "UPDATE writegate_log SET format = 0",
            "ALTER TABLE events DISABLE TRIGGER USER",
            "DROP TRIGGER events_no_update ON events",
            "CREATE TABLE squatter (id int)",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                intruder.execute(sql.encode())
