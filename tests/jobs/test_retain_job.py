"""A retention as a job over MCP, through the official SDK client and a real HTTP server:
an admin's forgets what the schema's periods have passed, as that admin, with its receipt;
another agent granted the job tools may not start one (it forgets data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_retain_cli import expired_log
from tests.jobs.admins import admin_and_writer
from tests.jobs.test_job_tools import ended
from writegate.eventlog import open_log

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_admin_runs_a_retention_as_a_job_and_another_agent_may_not(
    tmp_path: Path,
) -> None:
    db = expired_log(tmp_path)
    async with admin_and_writer(db) as (admin, ana):
        refused = await ana.call("job_start", {"kind": "retain"})
        assert refused.data["error_code"] == "POLICY_DENIED", refused.data
        assert refused.data["message"] == "retain jobs forget personal values: admins only"
        started = await admin.call("job_start", {"kind": "retain"})
        assert not started.is_error, started.data
        done = await ended(admin, started.data["job"]["id"])
        job = done.data["job"]
        assert (job["state"], job["done"], job["total"]) == ("completed", 1, 1), job
        assert job["outcome"].startswith("expired 1 value at seq 4: 2 events")
    with open_log(db, create=False, readonly=True) as log:
        receipts = [e for e in log.iter_events(after_seq=0) if e.type == "values.expired"]
    assert [e.actor.agent for e in receipts] == ["ops"]
    assert b"old@mail" not in db.read_bytes()
