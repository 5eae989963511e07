"""The README's role setup, pasted: the application role appends, reads, keeps the state
model and records refusals, and can rewrite no history — not even with the triggers gone."""

from __future__ import annotations

import re
import subprocess
import uuid

import psycopg
import pytest

from tests.conftest import EXAMPLE_SCHEMA
from tests.postgres import Server, create_app_role
from tests.readme import blocks, section
from tests.server.harness import WRITEGATE
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


def test_the_role_setup_runs_as_the_roles_it_names(postgres: Server) -> None:
    """Each SQL block of the role setup says on its first line who runs it — a superuser, or
    the log's owner in the log's database — and runs, as written, as that role: the owner
    creates the log, the application role then appends and cannot rewrite. Roles are the
    whole server's, so the names get this test's suffix (the only change to the SQL)."""
    text = section("## Roles: who runs what")
    suffix = uuid.uuid4().hex[:8]
    names = {name: f"{name}_{suffix}" for name in ("writegate_app", "writegate", "memory")}

    def named(sql: str) -> str:
        return re.sub(r"\b(writegate_app|writegate|memory)\b", lambda m: names[m[1]], sql)

    owner = postgres.dsn(names["memory"], user=names["writegate"])
    initialized = False
    for block in blocks(text, "sql"):
        who = block.splitlines()[0]
        assert who.startswith("-- as "), f"the block does not say who runs it: {who}"
        if "superuser" in who:
            dsn = postgres.dsn()
        else:
            assert "owner" in who, who
            dsn = owner
            if not initialized:  # the owner's grants follow `init`, as the guide says
                init = subprocess.run(
                    [WRITEGATE, "--db", owner, "init", "--schema", str(EXAMPLE_SCHEMA)],
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                assert init.returncode == 0, init.stderr
                initialized = True
        with psycopg.connect(dsn, autocommit=True) as conn:  # one statement at a time, as psql
            for statement in re.split(r";\s*\n", named(block)):
                if statement.strip():
                    conn.execute(statement.encode())
    assert initialized
    app = owner.replace(f"//{names['writegate']}@", f"//{names['writegate_app']}@")
    wrote = subprocess.run(
        [WRITEGATE, "--db", app, "write", "node", "Person", "-k", "name=Ada",
         "--source", "hr.csv", "--method", "parsed"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    with (
        psycopg.connect(app, autocommit=True) as intruder,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        intruder.execute(b"DELETE FROM events")
