"""Two gates on one log: a schema one publishes binds the other's next write.

Servers sharing a PostgreSQL log each cache the schema; a write checked against a cache
that another server has since superseded would let through what the log's schema refuses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT, SEED_SCHEMA, person, relationship, seed_document
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


def _closed_person(*, grown: bool = False) -> dict[str, Any]:
    """Seed 000's schema with :Person closed; ``grown`` adds :Event, :ATTENDED and born."""
    document = seed_document()
    document["nodes"]["Person"]["additional_properties"] = False
    if grown:
        document["nodes"]["Event"] = {"merge_keys": ["name"], "required": ["name"]}
        document["nodes"]["Person"]["properties"]["born"] = {"type": "integer"}
        document["relationships"]["ATTENDED"] = {"from": ["Person"], "to": ["Event"]}
    return document


def _attended(g: Gate) -> Any:
    return g.write_relationship(
        **relationship(type="ATTENDED", to_label="Event", to_keys={"name": "Launch"})
    )


def test_a_refusal_is_decided_against_the_schema_published_elsewhere(
    db_path: str | Path,
) -> None:
    """What another process's schema adds is admitted by this gate's very next write, though
    its cached schema refused it: a refusal for an unknown label, type or property is checked
    again against the log's newest schema before it is given."""
    with Gate.open(db_path, default_actor=AGENT, unknown_label_policy="reject") as first:
        first.publish_schema(_closed_person())
        assert isinstance(first.write_node(**person("Alice")), WriteNodeResult)
        launch = person("Launch", label="Event", properties={})
        refusals = [
            first.write_node(**launch),
            _attended(first),
            first.write_node(**person("Alice", properties={"born": 1906})),
        ]
        assert [getattr(r, "error_code", r) for r in refusals] == [
            "SCHEMA_UNKNOWN_LABEL",
            "SCHEMA_UNKNOWN_LABEL",
            "SCHEMA_UNKNOWN_PROPERTY",
        ]
        with Gate.open(db_path, default_actor=AGENT) as second:
            assert second.publish_schema(_closed_person(grown=True)).status == "published"
        event = first.write_node(**launch)
        assert isinstance(event, WriteNodeResult), event
        assert event.schema_version == first.current_schema().version
        assert _attended(first).status == "written"
        born = first.write_node(**person("Alice", properties={"born": 1906}))
        assert isinstance(born, WriteNodeResult), born


def test_a_refusal_under_the_newest_schema_costs_no_reload(db_path: str | Path) -> None:
    with Gate.open(db_path, default_actor=AGENT, unknown_label_policy="reject") as g:
        g.publish_schema(SEED_SCHEMA)
        loaded = g.current_schema()
        for name in ("A", "B"):
            refused = g.write_node(**person(name, label="Event"))
            assert isinstance(refused, Rejected)
            assert refused.error_code == "SCHEMA_UNKNOWN_LABEL"
        assert g.current_schema() is loaded
