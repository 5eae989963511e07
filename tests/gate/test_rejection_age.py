"""Refused requests are kept for auditors no longer than an age limit, beside the count cap:
rows refused longer ago than ``max_age`` go when a process first records a refusal and
then as often as the count cap prunes; set in Python, by ``[rejections] max_age_days``, by
``WRITEGATE_REJECTION_MAX_AGE_DAYS`` or by ``serve --rejections-max-age``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from tests.cli.conftest import writegate
from tests.conftest import SEED_SCHEMA
from tests.server.harness import stdio_agent
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected
from writegate.gate.rejections import MAX_AGE_ENV, RejectionLog

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)  # past: the CLI and server run at today's time
DAY = timedelta(days=1)


def refuse(gate: Gate, agent: str) -> None:
    """A write the gate refuses (an extraction method the schema does not know)."""
    out = gate.write_node(
        label="Person",
        merge_keys={"name": agent},
        source="s",
        extraction_method="guess",
        actor=Actor(agent=agent),
    )
    assert isinstance(out, Rejected), out


def kept(db: str | Path) -> list[str]:
    with Gate.open(db, create=False) as gate:
        return [r.agent for r in gate.rejections.read()]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db(any_db: str | Path) -> str | Path:
    """A log whose rejections table holds refusals from 40, 20 and 1 days before T0."""
    with Gate.open(any_db) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for days, agent in ((40, "old"), (20, "middling"), (1, "recent")):
            with freeze_time(T0 - days * DAY):
                refuse(gate, agent)
        assert gate.rejections.drained(10)
    return any_db


def test_a_process_first_refusal_drops_rows_older_than_the_limit(db: str | Path) -> None:
    with freeze_time(T0), Gate.open(db, create=False) as gate:
        gate.rejections.max_age = timedelta(days=30)
        refuse(gate, "now")
        assert gate.rejections.drained(10)
    assert kept(db) == ["middling", "recent", "now"]


def test_later_refusals_prune_as_often_as_the_count_cap(db: str | Path) -> None:
    with Gate.open(db, create=False) as gate:
        gate.rejections.max_age = timedelta(days=10)
        gate.rejections.retention = 10  # prunes on every refusal
        with freeze_time(T0 - 15 * DAY):
            refuse(gate, "first")  # drops the row of 40 days before T0
        assert kept(db) == ["middling", "recent", "first"]
        with freeze_time(T0):
            refuse(gate, "second")  # the same process: the rows 20 and 15 days old go
        assert gate.rejections.drained(10)
    assert kept(db) == ["recent", "second"]


def test_without_a_limit_nothing_is_dropped_for_its_age(db: str | Path) -> None:
    with freeze_time(T0 + 3650 * DAY), Gate.open(db, create=False) as gate:
        assert gate.rejections.max_age is None
        refuse(gate, "now")
        assert gate.rejections.drained(10)
    assert kept(db) == ["old", "middling", "recent", "now"]


def test_the_environment_sets_the_limit_and_a_bad_one_is_refused(
    db: str | Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MAX_AGE_ENV, "2.5")
    with Gate.open(db, create=False) as gate:
        assert gate.rejections.max_age == timedelta(days=2.5)
        for bad in ("0", "-1", "soon", "inf", "nan"):
            monkeypatch.setenv(MAX_AGE_ENV, bad)
            with pytest.raises(ValueError, match=MAX_AGE_ENV):
                RejectionLog(gate.log)


def limit() -> float:
    """Days from 30 days before T0 to now: the row of 40 days before T0 is older than it,
    the others younger (the command runs at today's time, not a frozen one)."""
    return (datetime.now(UTC) - (T0 - 30 * DAY)) / DAY


def test_the_cli_takes_the_limit_from_its_config(db: str | Path, tmp_path: Path) -> None:
    config = tmp_path / "writegate.toml"
    age = limit()
    config.write_text(f"[rejections]\nmax_age_days = {age}\n")
    refused = writegate(
        db, "--config", str(config), "write", "node", "Person:name=Cli",
        "--source", "s", "--method", "guess", code=1,
    )  # fmt: skip
    assert refused.stderr.startswith("error: INVALID_EXTRACTION_METHOD:")
    assert kept(db)[:2] == ["middling", "recent"]
    assert kept(db)[2].startswith("operator:")


@pytest.mark.anyio
async def test_serve_takes_the_limit_as_an_option(db: str | Path, tmp_path: Path) -> None:
    env = {"WRITEGATE_TOKENS": str(tmp_path / "tokens.json")}  # PostgreSQL's has no file
    extra = ("--rejections-max-age", str(limit()))
    async with stdio_agent(db, "agent-1", ("writer",), env, extra=extra) as agent:
        out = await agent.call(
            "write_node",
            {"label": "Person", "merge_keys": {"name": "Mcp"}, "source": "s",
             "extraction_method": "guess"},
        )  # fmt: skip
        assert out.data["error_code"] == "INVALID_EXTRACTION_METHOD"
    assert kept(db) == ["middling", "recent", "agent-1"]


def test_a_bad_configured_limit_is_one_line(db: str | Path, tmp_path: Path) -> None:
    config = tmp_path / "writegate.toml"
    config.write_text("[rejections]\nmax_age_days = 0\n")
    done = writegate(db, "--config", str(config), "log", code=2)
    assert len(done.stderr.splitlines()) == 1
    assert "max_age_days" in done.stderr
