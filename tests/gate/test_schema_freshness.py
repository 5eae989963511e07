"""Two gates on one log: a schema one publishes binds the other's next write.

Servers sharing a PostgreSQL log each cache the schema; a write checked against a cache
that another server has since superseded would let through what the log's schema refuses.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import AGENT, SEED_SCHEMA, person, seed_document
from writegate.gate import Gate, Rejected, WriteNodeResult


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Both backends."""
    return any_db


def test_a_schema_published_elsewhere_binds_the_next_write(db_path: str | Path) -> None:
    with Gate.open(db_path, default_actor=AGENT) as first:
        first.publish_schema(SEED_SCHEMA)
        assert isinstance(first.write_node(**person("Ada")), WriteNodeResult)
        with Gate.open(db_path, default_actor=AGENT) as second:
            stricter = seed_document()
            stricter["nodes"]["Person"]["properties"]["born"] = {"type": "integer"}
            assert second.publish_schema(stricter).status == "published"
        # ``first`` never refreshed its cache: the write transaction sees the newer schema
        refused = first.write_node(**person("Grace", properties={"born": "1906"}))
        assert isinstance(refused, Rejected), "checked against the superseded schema"
        assert refused.error_code == "SCHEMA_TYPE_MISMATCH"
        accepted = first.write_node(**person("Grace", properties={"born": 1906}))
        assert isinstance(accepted, WriteNodeResult)
        assert accepted.schema_version == first.current_schema().version


def test_an_unchanged_schema_costs_no_reload(db_path: str | Path) -> None:
    with Gate.open(db_path, default_actor=AGENT) as g:
        g.publish_schema(SEED_SCHEMA)
        loaded = g.current_schema()
        for name in ("A", "B", "C"):
            assert isinstance(g.write_node(**person(name)), WriteNodeResult)
        assert g.current_schema() is loaded
