"""Shared fixtures: every test gets a real SQLite log file in its own temporary folder."""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import freezegun
import pytest
import yaml

from tests.forked import ZYGOTE
from tests.postgres import Server, postgres_server
from writegate.eventlog import Actor
from writegate.gate import Gate

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SEED_SCHEMA = FIXTURES / "seed000_schema.yaml"
EXAMPLE_SCHEMA = FIXTURES / "schema.yaml"
AGENT = Actor(agent="agent-test", session="s-1", transport="api")

# A PostgreSQL log's connection pool keeps the clock for itself: under a frozen clock its
# scheduler never sees its deadlines pass, and closing the pool waited out its 5 s timeout.
freezegun.configure(extend_ignore_list=["psycopg_pool"])


def seed_document() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(SEED_SCHEMA.read_text())
    return document


def plain_example() -> dict[str, Any]:
    """The example schema without entity resolution, as it was before it had any: what a
    bench writing synthetic look-alike names ("person 20", "person 299") measures with."""
    document: dict[str, Any] = yaml.safe_load(EXAMPLE_SCHEMA.read_text())
    for label in document["nodes"].values():
        label.pop("resolution", None)
    return document


def pytest_configure(config: pytest.Config) -> None:
    """The suite's servers are forks of one process that has imported writegate
    (``tests.forked``): a test that needs the process itself names the console script."""
    ZYGOTE.serving = True


@pytest.fixture(autouse=True)
def _no_policy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WRITE_GATE_UNKNOWN_LABEL_POLICY", raising=False)
    monkeypatch.delenv("WRITE_GATE_FORMULA_PROVIDER", raising=False)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "log.db"


@pytest.fixture
def gate(db_path: Path) -> Iterator[Gate]:
    """A gate whose log has seed 000's schema published (and loaded)."""
    g = Gate.open(db_path, default_actor=AGENT)
    assert g.publish_schema(SEED_SCHEMA).status == "published"
    yield g
    g.close()


@pytest.fixture
def example_gate(db_path: Path) -> Iterator[Gate]:
    """A gate with the realistic example schema from fixtures/."""
    g = Gate.open(db_path, default_actor=AGENT)
    assert g.publish_schema(EXAMPLE_SCHEMA).status == "published"
    yield g
    g.close()


def person(name: str = "Alice", **overrides: Any) -> dict[str, Any]:
    """Seed 000 row 1's arguments, with overrides."""
    args: dict[str, Any] = {
        "label": "Person",
        "merge_keys": {"name": name},
        "properties": {"age": 30},
        "source": "test",
        "extraction_method": "manual",
        "reliability": 0.9,
    }
    args.update(overrides)
    return args


def relationship(**overrides: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": "Alice"},
        "to_label": "Person",
        "to_keys": {"name": "Bob"},
        "source": "test",
        "extraction_method": "llm",
        "reliability": 0.8,
    }
    args.update(overrides)
    return args


def state_of(g: Gate) -> tuple[tuple[int, str], dict[str, Any]]:
    """Log head and the whole state read model: equal before/after means nothing changed."""
    return g.log.head(), g.state.snapshot(g.log.connection())


@pytest.fixture(scope="session")
def postgres() -> Iterator[Server]:
    """A real PostgreSQL server for the whole run, started on first use (tests/postgres.py)."""
    with postgres_server() as server:
        yield server


_DATABASES = itertools.count(1)


@pytest.fixture
def pg_dsn(postgres: Server) -> str:
    """A new, empty database on that server for one test."""
    return postgres.create_database(f"wg_{next(_DATABASES)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """The log's address on each backend: a module whose ``db_path`` returns this runs its
    tests against both (the gate's behaviour may not depend on the database under it)."""
    if request.param == "sqlite":
        return tmp_path / "log.db"
    return str(request.getfixturevalue("pg_dsn"))


def concurrently(work: Callable[[], object], threads: int) -> None:
    """``work`` on ``threads`` threads at once, waited for."""
    started = [threading.Thread(target=work) for _ in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that would leave new files readable by everyone (0644)."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)
