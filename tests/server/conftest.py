"""Fixtures for the MCP tests: a log with seed 000's schema, served over stdio or HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA
from tests.server.harness import Served
from writegate.gate import Gate


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def published(db: Path, schema: Path = SEED_SCHEMA) -> Path:
    with Gate.open(db) as gate:
        assert gate.publish_schema(schema).status == "published"
    return db


ALL_TOOLS = ("--tools", "all")


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Served]:
    """Seed 000's schema published in a fresh log, served over each transport in turn."""
    s = Served(request.param, published(db_path))
    yield s
    s.close()


@pytest.fixture(params=["stdio", "http"])
def served_labels(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Served]:
    """Seed 000's schema served over each transport with the per-label tools as well."""
    s = Served(request.param, published(db_path), ALL_TOOLS)
    yield s
    s.close()


NPC_SCHEMA = Path(__file__).resolve().parents[2] / "fixtures" / "npc_schema.yaml"


@pytest.fixture(params=["stdio", "http"])
def served_npc(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Served]:
    """Seed 001's NPC example schema, served over each transport in turn with seed 001's
    per-label tools (``--tools all``; the default catalogue has only the generic ones)."""
    s = Served(request.param, published(db_path, NPC_SCHEMA), ALL_TOOLS)
    yield s
    s.close()
