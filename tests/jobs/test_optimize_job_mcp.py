"""The text index merged as a job over MCP, through the official SDK client and a real HTTP
server: an admin's runs to completion; another agent granted the job tools may not start
one (it holds the log's write lock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import AGENT, SEED_SCHEMA
from tests.jobs.admins import admin_and_writer
from tests.jobs.test_job_tools import ended
from tests.jobs.test_optimize_job import filled
from writegate.gate import Gate

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_admin_merges_the_index_as_a_job_and_another_agent_may_not(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db, default_actor=AGENT) as gate:
        gate.publish_schema(SEED_SCHEMA)
        filled(gate)
    async with admin_and_writer(db) as (admin, ana):
        refused = await ana.call("job_start", {"kind": "optimize"})
        assert refused.data["error_code"] == "POLICY_DENIED", refused.data
        started = await admin.call("job_start", {"kind": "optimize"})
        assert not started.is_error, started.data
        job = (await ended(admin, started.data["job"]["id"])).data["job"]
        assert (job["state"], job["done"], job["total"]) == ("completed", 3, 3), job
        assert job["outcome"].startswith("optimized the text index of")
        found = await admin.call("search_nodes", {"query": "ada", "neighbors": 1})
        assert not found.is_error, found.data
        assert found.data["nodes"][0]["more_relationships"] == 6
