"""A graph projection whose Bolt server is down: every command says so in one line, promptly,
and ``verify`` still gives the log's own checks. (Nothing listens on the port: no Java here.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA, person
from tests.console import run as writegate_run
from tests.server.harness import free_port
from writegate.eventlog import Actor
from writegate.gate import Gate

HANG = 20  # seconds: only catches a command stuck in retries (the driver's default is 30 s)


@pytest.fixture
def down(tmp_path: Path, db_path: Path) -> tuple[Path, Path, str]:
    """A small log and a config whose graph projection points at a port nobody listens on."""
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(actor=Actor(agent="a"), **person("Ada"))
    uri = f"bolt://127.0.0.1:{free_port()}"
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        f'[projections.g]\nkind = "graph"\nuri = "{uri}"\ndialect = "neo4j"\n\n'
        f'[projections.snapshot]\nkind = "jsonl"\npath = "{tmp_path / "g.jsonl"}"\n'
    )
    return db_path, toml, uri


def run(db: Path, toml: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return writegate_run(["--db", str(db), "--config", str(toml), *args])


def test_replay_says_each_retry_then_fails_in_one_line(
    down: tuple[Path, Path, str],
) -> None:
    """Retried for ``retry_seconds`` (2.5: pauses of 0.5 and 1 s fit, the next 2 s would
    not), each retry said as it starts, none of the driver's own warnings."""
    db, toml, uri = down
    toml.write_text(toml.read_text().replace('dialect = "neo4j"', "retry_seconds = 2.5"))
    out = run(db, toml, "replay", "g")
    assert out.returncode == 1
    *retries, error = out.stderr.splitlines()
    assert retries == [f"g: graph server {uri} unavailable; retrying ({n}/2)…" for n in (1, 2)], (
        out.stderr
    )
    assert error.startswith(f"error: g: graph server {uri} unavailable: ")
    assert error.endswith("(3 attempts)")
    assert "Connection refused" in error


def test_status_reports_an_unreachable_store_at_once_and_the_others(
    down: tuple[Path, Path, str],
) -> None:
    db, toml, _ = down
    out = run(db, toml, "status", "--json")  # the default 30 s of retries is not waited out
    assert out.returncode == 1
    assert out.stderr == "error: some projections could not be reached\n"
    rows = {row["name"]: row for row in map(json.loads, out.stdout.splitlines())}
    assert rows["g"]["checkpoint"] is None
    assert rows["g"]["error"].startswith("unreachable: g: graph server")
    assert rows["snapshot"] | {"store": None} == {
        "name": "snapshot",
        "store": None,
        "checkpoint": 0,
        "head": 2,
        "lag": 2,
        "error": None,
    }
    table = run(db, toml, "status")
    assert "unreachable" in table.stdout
    assert table.stderr == "error: some projections could not be reached\n"


def test_verify_still_checks_the_log_when_a_projection_is_down(
    down: tuple[Path, Path, str],
) -> None:
    db, toml, _ = down
    out = run(db, toml, "verify")
    assert out.returncode == 1  # a configured check could not be made
    lines = out.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "ok    hash chain",
        "ok    append-only triggers",
        "ok    history index",
        "ok    state read model",
        "FAIL  projection checkpoints",
        "ok    forgotten values in projections",
        "verified up to seq 2",
    ]
    assert "g could not be read (g: graph server" in lines[4]
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith("error: projection checkpoints: g could not be read")


def test_a_schema_source_set_only_by_environment_is_still_read(
    tmp_path: Path, down: tuple[Path, Path, str]
) -> None:
    """A write reads the settings only when there are some (start-up time), but settings
    given by environment alone count: the graph registry is asked, and is down."""
    db, _, uri = down
    env = {
        "WRITEGATE_SCHEMA_SOURCE__SOURCE": "graph",
        "WRITEGATE_PROJECTIONS__GRAPH__KIND": "graph",
        "WRITEGATE_PROJECTIONS__GRAPH__URI": uri,
        "WRITEGATE_PROJECTIONS__GRAPH__RETRY_SECONDS": "0",
    }
    args = ["write", "node", "Person:name=Eve", "--source", "s", "--method", "llm"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = writegate_run(["--db", str(db), *args], cwd=elsewhere, env=env)  # no writegate.toml
    assert out.returncode == 1
    assert out.stderr.startswith("error: SCHEMA_SOURCE_UNAVAILABLE: graph:")
