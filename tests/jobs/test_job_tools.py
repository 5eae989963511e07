"""The job tools over MCP, through the official SDK client and a real HTTP server: admins
only by the default roles, and an agent granted them sees only its own jobs — another's
is answered exactly as one that does not exist."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import httpx2
import pytest

from tests.cli.conftest import write_history
from tests.conftest import SEED_SCHEMA
from tests.jobs.test_rebuild_jobs import NODES, half_way, job_on
from tests.server.harness import WRITEGATE, Agent, Outcome, http_agent, http_server
from writegate.eventlog import open_log
from writegate.gate import Gate
from writegate.gate.server.policy import DEFAULT_POLICY_FILE
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.anyio


def person_item(i: int) -> dict[str, object]:
    return {
        "op": "write_node",
        "label": "Person",
        "merge_keys": {"name": f"person {i}"},
        "properties": {"age": i % 90},
        "source": "census",
        "extraction_method": "manual",
        "reliability": 0.9,
    }


JOB_TOOLS = {"job_start", "job_status", "job_cancel", "job_list"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def configured(tmp_path: Path) -> dict[str, str]:
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        f'[projections.snapshot]\nkind = "jsonl"\npath = "{tmp_path / "snapshot.jsonl"}"\n\n'
        f'[projections.mine]\nkind = "jsonl"\npath = "{tmp_path / "mine.jsonl"}"\n'
    )
    return {"WRITEGATE_CONFIG": str(toml)}


async def ended(agent: Agent, job: int) -> Outcome:
    """The job once it is no longer running (a job runs on the server's worker thread)."""
    while True:
        status = await agent.call("job_status", {"job": job})
        if status.is_error or status.data["job"]["state"] != "running":
            return status
        await anyio.sleep(0.05)


async def test_only_admins_see_the_job_tools_by_default(db_path: Path, tmp_path: Path) -> None:
    write_history(db_path)
    tokens = Path(str(db_path) + ".tokens.json")
    with http_server(db_path, env=configured(tmp_path)) as server:
        async with http_agent(server.url, create_token(tokens, "ops", ("admin",))) as admin:
            assert set(await admin.tool_names()) >= JOB_TOOLS
        async with http_agent(server.url, create_token(tokens, "ana", ("writer",))) as writer:
            assert JOB_TOOLS.isdisjoint(await writer.tool_names())


async def test_an_admin_backs_up_and_imports_over_mcp_and_another_agent_may_not(
    db_path: Path, tmp_path: Path
) -> None:
    write_history(db_path)
    policy = tmp_path / "policy.cedar"
    policy.write_text(
        DEFAULT_POLICY_FILE.read_text()
        + '\npermit (principal in Role::"writer", action in Action::"jobs", resource);\n'
    )
    memory = tmp_path / "memory.jsonl"
    memory.write_text(
        '{"type":"entity","name":"Dora","entityType":"Person","observations":["age: 41"]}\n'
    )
    backup = tmp_path / "backup.db"
    tokens = Path(str(db_path) + ".tokens.json")
    with http_server(db_path, extra=("--policy", str(policy))) as server:
        async with (
            http_agent(server.url, create_token(tokens, "ops", ("admin",))) as admin,
            http_agent(server.url, create_token(tokens, "ana", ("writer",))) as ana,
        ):
            imported = {"path": str(memory), "format": "mcp-memory", "method": "manual"}
            for kind, target, options in [
                ("backup", str(backup), {}),
                ("import", None, imported),
            ]:
                asked = {"kind": kind, "target": target, "options": options}
                refused = await ana.call("job_start", asked)
                assert refused.is_error
                assert refused.data["error_code"] == "POLICY_DENIED", refused.data
                started = await admin.call("job_start", asked)
                assert not started.is_error, started.data
                done = await ended(admin, started.data["job"]["id"])
                assert done.data["job"]["state"] == "completed", done.data
            again = await admin.call("job_start", {"kind": "backup", "target": str(backup)})
            assert again.data["error_code"] == "INVALID_ARGUMENT"
            assert again.data["message"] == f"{backup} exists (a backup never overwrites)"
    assert backup.exists()
    with open_log(db_path, create=False, readonly=True) as log:
        dora = [
            event.actor.agent
            for event in log.iter_events(after_seq=0)
            if event.type == "node.written" and event.payload["node"]["keys"] == {"name": "Dora"}
        ]
    assert dora == ["ops"]  # imported once, as the admin who asked


async def test_an_agent_sees_its_own_jobs_and_another_agents_are_indistinguishable_from_none(
    db_path: Path, tmp_path: Path
) -> None:
    write_history(db_path)
    policy = tmp_path / "policy.cedar"
    policy.write_text(
        DEFAULT_POLICY_FILE.read_text()
        + '\npermit (principal in Role::"writer", action in Action::"jobs", resource);\n'
    )
    tokens = Path(str(db_path) + ".tokens.json")
    extra = ("--policy", str(policy), "--metrics")
    with http_server(db_path, env=configured(tmp_path), extra=extra) as server:
        async with (
            http_agent(server.url, create_token(tokens, "ops", ("admin",))) as admin,
            http_agent(server.url, create_token(tokens, "ana", ("writer",))) as ana,
        ):
            started = await admin.call("job_start", {"kind": "rebuild", "target": "snapshot"})
            assert not started.is_error, started.data
            theirs = started.data["job"]["id"]
            done = await ended(admin, theirs)
            assert done.data["job"]["state"] == "completed", done.data
            assert done.data["job"]["owner"] == "ops"

            mine = await ana.call("job_start", {"kind": "replay", "target": "mine"})
            assert not mine.is_error, mine.data
            own = mine.data["job"]["id"]
            assert (await ended(ana, own)).data["job"]["state"] == "completed"

            listed = await ana.call("job_list", {})
            assert [job["id"] for job in listed.data["jobs"]] == [own]
            missing = theirs + own + 100  # no such job
            for tool in ("job_status", "job_cancel"):
                hidden = await ana.call(tool, {"job": theirs})
                absent = await ana.call(tool, {"job": missing})
                assert hidden.is_error
                assert absent.is_error
                assert hidden.data == {
                    **absent.data,
                    "message": f"no job {theirs}",
                    "details": {"job": theirs},
                }
                assert hidden.data["error_code"] == "JOB_NOT_FOUND"
            everyone = await admin.call("job_list", {})
            assert [job["id"] for job in everyone.data["jobs"]] == [own, theirs]
            assert (await admin.call("job_status", {"job": own})).data["job"]["owner"] == "ana"
        metrics = httpx2.get(server.url.removesuffix("/mcp") + "/metrics", timeout=30).text
    assert 'writegate_jobs{state="completed"} 2.0' in metrics
    assert 'writegate_jobs{state="running"} 0.0' in metrics
    assert (tmp_path / "snapshot.jsonl").read_text().count("\n") > 0


async def test_a_server_resumes_the_agents_jobs_a_server_that_died_left_interrupted(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for start in range(0, NODES, 1000):
            items = [person_item(i) for i in range(start, start + 1000)]
            assert gate.write_batch(items=items).status == "written"
    env = configured(tmp_path)
    tokens = Path(str(db) + ".tokens.json")
    token = create_token(tokens, "ops", ("admin",))
    with http_server(db, env=env, command=WRITEGATE) as first:  # its pid is killed
        async with http_agent(first.url, token) as admin:
            started = await admin.call("job_start", {"kind": "rebuild", "target": "snapshot"})
            assert not started.is_error, started.data
        caught = half_way(db, "snapshot", first.process, past=3000)
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait()
    assert (job_on(db, "snapshot") or caught).shown() == "interrupted"

    with http_server(db, env=env) as second:
        async with http_agent(second.url, token) as admin:
            done = await ended(admin, caught.id)
        said = second.said()
    assert done.data["job"]["state"] == "completed", done.data
    assert done.data["job"]["attempts"] == 2
    assert f"resumed job {caught.id} (rebuild snapshot) from " in said
    outcome = done.data["job"]["outcome"]
    assert f"(resumed job {caught.id} from seq " in outcome
    assert (tmp_path / "snapshot.jsonl").read_text().count("\n") >= NODES
