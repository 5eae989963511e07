"""A Bolt server that accepts and never answers (hung, or a firewall that swallows bytes):
the connect timeout alone does not cover the Bolt handshake, so every command that asks
such a server makes one bounded attempt and reports it unreachable."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA, person
from tests.hung import HungServer, hung_server
from tests.server.harness import WRITEGATE
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.projections.contract import ProjectionError
from writegate.projections.graph import BoltTarget, GraphProjector

HANG = 30  # seconds: only catches a command that waits out the driver's 60 s default


@pytest.fixture
def hung() -> Iterator[HungServer]:
    with hung_server() as server:
        yield server


@pytest.fixture
def config(tmp_path: Path, db_path: Path, hung: HungServer) -> Path:
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(actor=Actor(agent="a"), **person("Ada"))
    toml = tmp_path / "writegate.toml"
    toml.write_text(f'[projections.g]\nkind = "graph"\nuri = "{hung.uri}"\ndialect = "neo4j"\n')
    return toml


def run(db: Path, toml: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [WRITEGATE, "--db", str(db), "--config", str(toml), *args],
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("WRITEGATE_")},
    )


def test_the_projector_gives_up_on_a_silent_server_after_one_bounded_attempt(
    hung: HungServer,
) -> None:
    projector = GraphProjector(BoltTarget(hung.uri, dialect="neo4j", retry_seconds=0.0))
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            projector.checkpoint()
        except ProjectionError as exc:
            failed.append(exc)

    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    asking.join(HANG)
    projector.close()
    assert not asking.is_alive()
    assert "unavailable" in str(failed[0])
    assert hung.connections == 1
    assert hung.gave_up() == 1  # the driver hung up; it did not leave the attempt open


def test_status_reports_a_silent_server_unreachable(
    db_path: Path, config: Path, hung: HungServer
) -> None:
    out = run(db_path, config, "status", "--json")
    assert out.returncode == 1
    assert out.stderr == "error: some projections could not be reached\n"
    rows = {row["name"]: row for row in map(json.loads, out.stdout.splitlines())}
    assert rows["g"]["checkpoint"] is None
    assert rows["g"]["error"].startswith("unreachable: g: graph server")
    assert hung.connections == 1


def test_verify_reports_a_silent_server_and_still_checks_the_log(
    db_path: Path, config: Path, hung: HungServer
) -> None:
    out = run(db_path, config, "verify")
    assert out.returncode == 1
    assert out.stdout.splitlines()[0].startswith("ok    hash chain")
    assert "g could not be read (g: graph server" in out.stdout
    assert hung.connections == 1


def test_a_write_checked_against_a_silent_registry_is_refused_after_one_attempt(
    db_path: Path, config: Path, hung: HungServer
) -> None:
    config.write_text(
        config.read_text() + '\n[schema_source]\nsource = "graph"\nprojection = "g"\n'
    )
    out = run(
        db_path,
        config,
        *("write", "node", "Person:name=Eve", "--source", "s", "--method", "llm"),
    )
    assert out.returncode == 1
    assert out.stderr.startswith(f"error: SCHEMA_SOURCE_UNAVAILABLE: graph:{hung.uri}: ")
    assert out.stderr.count("\n") == 1
    assert hung.connections == 1  # one attempt per write, not one per schema read
