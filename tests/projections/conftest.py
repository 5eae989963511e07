"""Fixtures for the projection tests: a log with a full history, and a live Bolt server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA
from tests.projections.arcadedb import arcadedb_server
from tests.projections.history import build_history
from writegate.eventlog import Event
from writegate.gate import Gate
from writegate.projections.graph import BoltTarget


@pytest.fixture(scope="session")
def arcadedb_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's ArcadeDB server folder (its database's files under ``databases/``)."""
    return tmp_path_factory.mktemp("arcadedb")


@pytest.fixture(scope="session")
def arcadedb(arcadedb_root: Path) -> Iterator[BoltTarget]:
    """ArcadeDB over Bolt (Neo4j 5 dialect), started once for the session."""
    with arcadedb_server(arcadedb_root) as server:
        yield BoltTarget(server.uri, server.user, server.password, server.database, "neo4j")


def memgraph_target() -> BoltTarget | None:
    """A Memgraph server this machine was given (MEMGRAPH_URI), if any."""
    uri = os.environ.get("MEMGRAPH_URI")
    if not uri:
        return None
    return BoltTarget(
        uri,
        os.environ.get("MEMGRAPH_USER", ""),
        os.environ.get("MEMGRAPH_PASSWORD", ""),
        None,
        "memgraph",
    )


def _targets() -> list[str]:
    return ["arcadedb", *(["memgraph"] if memgraph_target() else [])]


@pytest.fixture(params=_targets())
def bolt(request: pytest.FixtureRequest) -> BoltTarget:
    """Every live graph server this machine has: ArcadeDB always; Memgraph if MEMGRAPH_URI."""
    target = memgraph_target() if request.param == "memgraph" else None
    if target is None:
        target = request.getfixturevalue("arcadedb")
    wipe(target)
    return target


def wipe(target: BoltTarget) -> None:
    """Empty the database, registry nodes included (tests own it)."""
    with target.driver() as driver, driver.session(database=target.database) as session:
        session.run("MATCH (n) DETACH DELETE n").consume()


@pytest.fixture
def history_gate(db_path: Path) -> Iterator[Gate]:
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        build_history(gate)
        yield gate


@pytest.fixture
def events(history_gate: Gate) -> list[Event]:
    return list(history_gate.log.iter_events())
