"""Observations from the command line: ``writegate observe`` keeps a text and prints its
id, writes cite it, ``search --observations`` and ``show observation`` answer as the MCP
tools do, ``audit node`` shows each write's citations; a refusal is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import as_json, writegate
from tests.conftest import SEED_SCHEMA
from tests.server.harness import stdio_agent
from writegate.gate import Gate

pytestmark = pytest.mark.anyio

TEXT = "Carol mentioned that she mentors Alice on the storage team."
OBSERVE = ["observe", "--source", "chat:carol", "--method", "llm", "--said-at"]
SAID = "2025-01-02T03:04:05Z"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
    return db


def test_observe_prints_the_id_writes_cite(log: Path) -> None:
    kept = writegate(log, *OBSERVE, SAID, TEXT).stdout.strip()
    assert kept.startswith("obs_")
    assert len(kept) == 36
    piped = writegate(log, *OBSERVE, SAID, "-", input=TEXT)
    assert piped.stdout.strip() == kept  # the same text, source and time: one observation
    assert "recorded before" in piped.stderr
    writegate(
        log,
        "write",
        "node",
        "Person:name=Alice",
        "--source",
        "chat:carol",
        "--method",
        "llm",
        "--observation",
        kept,
    )
    trail = as_json(log, "audit", "node", "Person:name=Alice", "--format", "json")
    [entry] = trail["entries"]
    assert entry["observations"] == [{"observation_id": kept, "excerpt": TEXT}]
    table = writegate(log, "audit", "node", "Person:name=Alice", env={"COLUMNS": "300"}).stdout
    assert f"cites {kept}: {TEXT}" in table


def test_refusals_are_one_line(log: Path) -> None:
    empty = writegate(log, *OBSERVE, SAID, "  ", code=1)
    assert empty.stderr == "error: INVALID_ARGUMENT: text must not be empty\n"
    unknown = "obs_" + "a" * 32
    cited = writegate(
        log,
        "write",
        "node",
        "Person:name=Alice",
        "--source",
        "s",
        "--method",
        "llm",
        "--observation",
        unknown,
        code=1,
    )
    assert cited.stderr.startswith(f"error: OBSERVATION_NOT_FOUND: no observation {unknown}")
    assert len(cited.stderr.splitlines()) == 1
    shown = writegate(log, "show", "observation", unknown, code=1)
    assert shown.stderr == f"error: OBSERVATION_NOT_FOUND: no observation {unknown}\n"
    with Gate.open(log, readonly=True) as gate:
        assert gate.log.head()[0] == 1  # the schema only


async def test_the_commands_answer_as_the_tools_do(log: Path) -> None:
    kept = json.loads(writegate(log, *OBSERVE, SAID, TEXT, "--format", "json").stdout)
    writegate(log, *OBSERVE, SAID, "Alice moved to the storage team in May.", "--session", "s-9")
    async with stdio_agent(log, "reader-1", ("reader",)) as agent:
        found = await agent.call("search_observations", {"query": "storage team", "limit": 1})
        rest = await agent.call(
            "search_observations",
            {"query": "storage team", "limit": 1, "cursor": found.data["next_cursor"]},
        )
        one = await agent.call("open_observation", {"observation_id": kept["observation_id"]})
    async with stdio_agent(log, "writer-1", ("writer",)) as agent:
        again = await agent.call(
            "record_observation",
            {"text": TEXT, "source": "chat:carol", "extraction_method": "llm", "said_at": SAID},
        )
    search = ["search", "storage team", "--observations", "--limit", "1", "--format", "json"]
    assert as_json(log, *search) == found.data
    cursor = found.data["next_cursor"]
    assert as_json(log, *search, "--cursor", cursor) == rest.data
    assert (
        as_json(log, "show", "observation", kept["observation_id"], "--format", "json") == one.data
    )
    assert again.data == {**kept, "status": "unchanged"}
    assert kept["status"] == "recorded"
    table = writegate(log, "search", "storage", "--observations", env={"COLUMNS": "300"}).stdout
    assert "2 observations" in table
    assert "Alice moved to the storage team in May." in table
