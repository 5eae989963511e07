"""Seed 000's test matrix, rows 1-10, again: this time as MCP tool calls over stdio and HTTP."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import person, relationship, seed_document
from tests.server.harness import Served
from writegate.eventlog import EventLog
from writegate.gate import Gate, __version__

pytestmark = pytest.mark.anyio


def _state_node(served: Served, label: str, name: str) -> dict[str, object] | None:
    with EventLog(served.db, create=False) as log:
        row = (
            log.connection()
            .execute(
                "SELECT stub, remapped_from FROM state_nodes WHERE identity = ?",
                (f'{label}{{"name":"{name}"}}',),
            )
            .fetchone()
        )
    return None if row is None else {"stub": bool(row[0]), "remapped_from": row[1]}


def _head(served: Served) -> int:
    with EventLog(served.db, create=False) as log:
        return log.head()[0]


async def test_row_01_write_node_computes_confidence_and_stamps_version(served: Served) -> None:
    async with served.agent("agent-row1") as agent:
        out = await agent.call("write_node", person())
    assert not out.is_error
    assert out.data["status"] == "written"
    assert out.data["confidence"] == 0.675
    assert out.data["write_gate_version"] == __version__
    assert out.data["label"] == "Person"
    assert out.data["remapped_from"] is None
    with EventLog(served.db, create=False) as log:
        event = log.read(after_seq=out.data["seq"] - 1, limit=1).events[0]
    assert event.actor.agent == "agent-row1"  # the authenticated agent, not an argument
    assert event.actor.transport == served.transport
    assert event.provenance is not None
    assert event.provenance["confidence"] == 0.675


async def test_row_02_protected_field_is_rejected(served: Served) -> None:
    before = _head(served)
    async with served.agent() as agent:
        out = await agent.call("write_node", person(properties={"confidence": 1.0}))
    assert out.is_error
    assert out.data["status"] == "rejected"
    assert out.data["error_code"] == "SCHEMA_PROTECTED_FIELD"
    assert _head(served) == before


async def test_row_03_registered_synonym_remaps_to_canonical_label(served: Served) -> None:
    async with served.agent() as agent:
        out = await agent.call("write_node", person(label=":person"))
    assert out.data["label"] == "Person"
    assert out.data["remapped_from"] == ":person"
    assert _state_node(served, "Person", "Alice") == {"stub": False, "remapped_from": ":person"}


async def test_row_04_unknown_label_remaps_to_fallback_in_remap_mode(served: Served) -> None:
    async with served.agent() as agent:
        out = await agent.call("write_node", person(label="ZZZNonexistent"))
    assert not out.is_error
    assert out.data["label"] == "Entity"
    assert out.data["remapped_from"] == ":ZZZNonexistent"


async def test_row_05_unknown_label_is_rejected_in_reject_mode(served: Served) -> None:
    served.env["WRITE_GATE_UNKNOWN_LABEL_POLICY"] = "reject"
    before = _head(served)
    async with served.agent() as agent:
        out = await agent.call("write_node", person(label="ZZZNonexistent"))
    assert out.is_error
    assert out.data["error_code"] == "SCHEMA_UNKNOWN_LABEL"
    assert _head(served) == before


async def test_row_06_missing_required_property_lists_it(served: Served) -> None:
    async with served.agent() as agent:
        out = await agent.call("write_node", person(merge_keys={}, properties={}))
    assert out.data["error_code"] == "SCHEMA_MISSING_REQUIRED_PROPERTY"
    assert "name" in out.data["details"]["missing"]


async def test_row_07_unregistered_relationship_type_is_rejected(served: Served) -> None:
    async with served.agent() as agent:
        await agent.call("write_node", person("Alice"))
        await agent.call("write_node", person("Bob"))
        before = _head(served)
        out = await agent.call("write_relationship", relationship(type="DIRECTED"))
    assert out.is_error
    assert out.data["error_code"] == "SCHEMA_UNKNOWN_LABEL"
    assert _head(served) == before


async def test_row_08_missing_endpoint_fails_by_default(served: Served) -> None:
    async with served.agent() as agent:
        await agent.call("write_node", person("Alice"))
        out = await agent.call("write_relationship", relationship())
    assert out.data["error_code"] == "ENDPOINT_NOT_FOUND"
    assert out.data["details"]["end"] == "to"


async def test_row_09_merge_endpoints_creates_a_stub(served: Served) -> None:
    async with served.agent() as agent:
        await agent.call("write_node", person("Alice"))
        out = await agent.call(
            "write_relationship", relationship(endpoint_policy="merge_endpoints")
        )
    assert not out.is_error
    assert out.data["stubs_created"] == [{"label": "Person", "merge_keys": {"name": "Bob"}}]
    assert _state_node(served, "Person", "Bob") == {"stub": True, "remapped_from": None}


async def test_row_10_refresh_after_adding_event_label(served: Served) -> None:
    event_write = person("Launch", label="Event", properties={})
    async with served.agent("schema-writer", ("writer",)) as agent:
        first = await agent.call("refresh_schema_cache", {})
        assert first.data["status"] == "refreshed"
        before = await agent.call("write_node", event_write)
        assert before.data["label"] == "Entity"  # not yet known: remapped to the fallback

        document = seed_document()
        document["nodes"]["Event"] = {"merge_keys": ["name"], "required": ["name"]}
        with Gate.open(served.db) as operator:  # an operator publishes the new schema
            assert operator.publish_schema(yaml.safe_load(yaml.safe_dump(document))).status == (
                "published"
            )
        refreshed = await agent.call("refresh_schema_cache", {})
        assert refreshed.data["status"] == "refreshed"
        assert refreshed.data["loaded"] == first.data["loaded"] + 1
        after = await agent.call("write_node", event_write)
    assert after.data["label"] == "Event"
    assert after.data["remapped_from"] is None
