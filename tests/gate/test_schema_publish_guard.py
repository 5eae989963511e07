"""Safe schema changes (issue 10, acceptance 3), through the Python API: a change that
strands or invalidates live data is refused (``SCHEMA_CHANGE_UNSAFE``, nothing appended)
unless forced; the diff names it and counts what it harms; the event records the diff."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT, EXAMPLE_SCHEMA, seed_document
from writegate.gate import Gate, Rejected, WriteNodeResult, WriteRelationshipResult
from writegate.gate.schema.diff import SchemaDiff
from writegate.gate.schema.publishing import SchemaPublishResult, diff_with_log
from writegate.language import SchemaPublished, payload_of

CLAIM: dict[str, Any] = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.9}


def base() -> dict[str, Any]:
    """Seed 000's schema with an enum and a relationship type to change."""
    document = seed_document()
    document["nodes"]["Person"]["properties"]["role"] = {
        "type": "string",
        "enum": ["engineer", "director"],
    }
    document["relationships"] = {"WORKS_AT": {"from": ["Person"], "to": ["Organization"]}}
    return document


@pytest.fixture
def live(db_path: Path) -> Iterator[Gate]:
    """Ada the director works at Initech."""
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(base()).status == "published"
        ada = gate.write_node(
            label="Person", merge_keys={"name": "Ada"}, properties={"role": "director"}, **CLAIM
        )
        works = gate.write_relationship(
            type="WORKS_AT", from_label="Person", from_keys={"name": "Ada"},
            to_label="Organization", to_keys={"name": "Initech"},
            endpoint_policy="merge_endpoints", **CLAIM,
        )  # fmt: skip
        assert isinstance(ada, WriteNodeResult)
        assert isinstance(works, WriteRelationshipResult)
        yield gate


def refused(gate: Gate, document: dict[str, Any]) -> SchemaDiff:
    """Publishing ``document`` is refused as unsafe and appends nothing; the diff it names."""
    head = gate.log.head()
    out = gate.publish_schema(document)
    assert isinstance(out, Rejected), out
    assert out.error_code == "SCHEMA_CHANGE_UNSAFE"
    assert gate.log.head() == head
    assert "--force" in out.message
    return SchemaDiff.model_validate(out.details)


def test_dropping_a_label_with_live_nodes_strands_them(live: Gate) -> None:
    document = base()
    del document["nodes"]["Organization"]
    document["relationships"] = {}
    diff = refused(live, document)
    assert diff.stranded == ["Organization", "WORKS_AT"]
    assert "- label Organization: removed" in [c.describe() for c in diff.changes]
    [organizations] = [i for i in diff.impact if i.name == "Organization"]
    assert organizations.live == 1
    assert organizations.writes_go_to == "Entity"  # the fallback label takes later writes
    assert diff_with_log(live.log, live.state, document) == diff  # `schema diff` says the same


def test_a_new_required_property_invalidates_the_nodes_without_it(live: Gate) -> None:
    document = base()
    document["nodes"]["Person"]["properties"]["email"] = {"type": "string"}
    document["nodes"]["Person"]["required"] = ["name", "email"]
    diff = refused(live, document)
    assert diff.invalid == 1
    assert "~ label Person.email: now required" in [c.describe() for c in diff.changes]
    [people] = [i for i in diff.impact if i.name == "Person"]
    [violation] = people.violations
    assert (violation.error_code, violation.subject, violation.count) == (
        "SCHEMA_MISSING_REQUIRED_PROPERTY",
        "email",
        1,
    )
    assert violation.example == 'Person{"name":"Ada"}'


def test_a_narrowed_enum_invalidates_the_values_it_drops(live: Gate) -> None:
    document = base()
    document["nodes"]["Person"]["properties"]["role"]["enum"] = ["engineer"]
    diff = refused(live, document)
    assert diff.invalid == 1
    assert [c.describe() for c in diff.changes] == ["~ label Person.role: enum drops director"]


def test_forcing_publishes_and_the_event_records_the_diff(live: Gate) -> None:
    document = base()
    del document["nodes"]["Organization"]
    document["relationships"] = {}
    out = live.publish_schema(document, force=True)
    assert isinstance(out, SchemaPublishResult)
    assert out.status == "published"
    assert out.diff is not None
    assert out.diff.forced
    event = live.log.read(types=[SchemaPublished.event_type]).events[-1]
    published = payload_of(event)
    assert isinstance(published, SchemaPublished)
    assert published.diff is not None
    assert published.diff["forced"] is True
    assert published.diff["stranded"] == ["Organization", "WORKS_AT"]


def test_a_safe_change_publishes_without_force_and_says_so(live: Gate) -> None:
    document = copy.deepcopy(base())
    document["nodes"]["Person"]["properties"]["email"] = {"type": "string"}
    document["nodes"]["Event"] = {"merge_keys": ["name"], "properties": {"name": {}}}
    out = live.publish_schema(document)
    assert isinstance(out, SchemaPublishResult)
    assert out.diff is not None
    assert out.diff.safe
    assert sorted(c.describe() for c in out.diff.changes) == [
        "+ label Event: added",
        "~ label Person.email: declared",
    ]


def test_the_example_schema_over_the_seed_one_lists_every_change(db_path: Path) -> None:
    with Gate.open(db_path, default_actor=AGENT) as gate:
        gate.publish_schema(seed_document())
        diff = diff_with_log(gate.log, gate.state, EXAMPLE_SCHEMA)
    assert diff.safe  # nothing written yet: nothing to strand
    assert diff.changes  # yet every difference is named
