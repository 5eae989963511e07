"""Every rejection returns its precise code and leaves the log head and state untouched."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import person, relationship, state_of
from writegate.gate import Gate, Rejected

Call = Callable[[Gate], Any]


def _setup(g: Gate) -> None:
    """Alice and Bob exist, Alice KNOWS Bob, and Carol is a stub."""
    g.write_node(**person("Alice"))
    g.write_node(**person("Bob"))
    g.write_relationship(**relationship())
    g.write_relationship(
        **relationship(to_keys={"name": "Carol"}, endpoint_policy="merge_endpoints")
    )


CASES: list[tuple[str, str, Call]] = [
    (
        "INVALID_ARGUMENT",
        "node: merge key not scalar",
        lambda g: g.write_node(**person(merge_keys={"name": ["A"]})),
    ),
    (
        "INVALID_ARGUMENT",
        "node: nested property",
        lambda g: g.write_node(**person(properties={"age": {"years": 3}})),
    ),
    (
        "INVALID_ARGUMENT",
        "node: NaN property",
        lambda g: g.write_node(**person(properties={"score": float("nan")})),
    ),
    (
        "INVALID_ARGUMENT",
        "node: reliability is text",
        lambda g: g.write_node(**person(reliability="high")),
    ),
    (
        "INVALID_ARGUMENT",
        "node: unexpected argument (as an agent sends it)",
        lambda g: g.call("write_node", person(agent="mallory")),
    ),
    (
        "INVALID_ARGUMENT",
        "node: integer beyond 64 bits",
        lambda g: g.write_node(**person(properties={"age": 2**70})),
    ),
    (
        "INVALID_ARGUMENT",
        "node: mixed list",
        lambda g: g.write_node(**person(properties={"tags": ["a", 1]})),
    ),
    (
        "INVALID_ARGUMENT",
        "node: key and property disagree",
        lambda g: g.write_node(**person(properties={"name": "Other"})),
    ),
    (
        "INVALID_IDENTIFIER",
        "node: injection label",
        lambda g: g.write_node(**person(label="Person`) DETACH DELETE n //")),
    ),
    (
        "INVALID_IDENTIFIER",
        "node: property name with space",
        lambda g: g.write_node(**person(properties={"first name": "A"})),
    ),
    (
        "SCHEMA_PROTECTED_FIELD",
        "node: protected property",
        lambda g: g.write_node(**person(properties={"source": "me"})),
    ),
    (
        "SCHEMA_PROTECTED_FIELD",
        "node: reserved underscore property",
        lambda g: g.write_node(**person(properties={"_stub": False})),
    ),
    (
        "SCHEMA_TYPE_MISMATCH",
        "node: declared integer gets text",
        lambda g: g.write_node(**person(properties={"age": "thirty"})),
    ),
    (
        "SCHEMA_MERGE_KEY_MISMATCH",
        "node: extra merge key",
        lambda g: g.write_node(**person(merge_keys={"name": "A", "age": 3}, properties={})),
    ),
    (
        "SCHEMA_MERGE_KEY_MISMATCH",
        "node: merge key names another property, the declared one in properties",
        lambda g: g.write_node(**person(merge_keys={"age": 3}, properties={"name": "X"})),
    ),
    (
        "NODE_ALREADY_EXISTS",
        "node: create_only over an existing node",
        lambda g: g.write_node(**person("Alice", create_only=True)),
    ),
    (
        "LIMIT_EXCEEDED",
        "node: a five-megabyte value",
        lambda g: g.write_node(**person(properties={"notes": "x" * 5_000_000})),
    ),
    (
        "SCHEMA_MISSING_REQUIRED_PROPERTY",
        "node: required removed with null",
        lambda g: g.write_node(**person(merge_keys={}, properties={"name": None})),
    ),
    (
        "INVALID_EXTRACTION_METHOD",
        "node: unknown method",
        lambda g: g.write_node(**person(extraction_method="vibes")),
    ),
    (
        "SCHEMA_UNKNOWN_LABEL",
        "relationship: unknown type",
        lambda g: g.write_relationship(**relationship(type="DIRECTED")),
    ),
    (
        "SCHEMA_ENDPOINT_LABEL_NOT_ALLOWED",
        "relationship: wrong endpoint label",
        lambda g: g.write_relationship(**relationship(type="WORKS_FOR")),
    ),
    (
        "ENDPOINT_NOT_FOUND",
        "relationship: missing endpoint",
        lambda g: g.write_relationship(**relationship(to_keys={"name": "Nobody"})),
    ),
    (
        "INVALID_ARGUMENT",
        "relationship: bad endpoint policy",
        lambda g: g.write_relationship(**relationship(endpoint_policy="sometimes")),
    ),
    (
        "VERSION_CONFLICT",
        "node: stale if_version",
        lambda g: g.write_node(**person("Alice", if_version=7)),
    ),
    (
        "VERSION_CONFLICT",
        "node: create-only on existing",
        lambda g: g.write_node(**person("Alice", if_version=0)),
    ),
    (
        "NODE_NOT_FOUND",
        "delete: absent node",
        lambda g: g.delete_node(
            label="Person", merge_keys={"name": "Nobody"}, source="t", extraction_method="api"
        ),
    ),
    (
        "NODE_HAS_RELATIONSHIPS",
        "delete: attached node without detach",
        lambda g: g.delete_node(
            label="Person", merge_keys={"name": "Alice"}, source="t", extraction_method="api"
        ),
    ),
    (
        "RELATIONSHIP_NOT_FOUND",
        "delete: absent relationship",
        lambda g: g.delete_relationship(**{**relationship(to_keys={"name": "Alice"})}),
    ),
    ("INVALID_ARGUMENT", "batch: not a list", lambda g: g.write_batch(items="write everything")),
    (
        "INVALID_ARGUMENT",
        "batch: unknown op",
        lambda g: g.write_batch(items=[{"op": "run_cypher", "query": "MATCH (n) DELETE n"}]),
    ),
    (
        "SCHEMA_PROTECTED_FIELD",
        "batch: second item bad, first good",
        lambda g: g.write_batch(
            items=[
                {"op": "write_node", **person("Dora")},
                {"op": "write_node", **person("Eve", properties={"confidence": 1})},
            ]
        ),
    ),
    (
        "ENDPOINT_NOT_FOUND",
        "batch: last item fails inside the transaction",
        lambda g: g.write_batch(
            items=[
                {"op": "write_node", **person("Dora")},
                {
                    "op": "delete_node",
                    "label": "Person",
                    "merge_keys": {"name": "Alice"},
                    "source": "t",
                    "extraction_method": "api",
                    "detach": True,
                },
                {"op": "write_relationship", **relationship(from_keys={"name": "Alice"})},
            ]
        ),
    ),
    (
        "SCHEMA_INVALID",
        "publish: invalid schema",
        lambda g: g.publish_schema({"nodes": {"Bad Label": {}}}),
    ),
]


@pytest.mark.parametrize(("code", "name", "call"), CASES, ids=[c[1] for c in CASES])
def test_rejection_appends_nothing(gate: Gate, code: str, name: str, call: Call) -> None:
    _setup(gate)
    before = state_of(gate)
    result = call(gate)
    assert isinstance(result, Rejected), result
    assert result.error_code == code, result.message
    assert result.message
    assert state_of(gate) == before


def test_batch_rejection_names_the_failing_item(gate: Gate) -> None:
    _setup(gate)
    result = CASES[-3][2](gate)
    assert isinstance(result, Rejected)
    assert result.details["item"] == 1
    assert result.details["op"] == "write_node"
    assert result.message.startswith("item 1 (write_node):")


def test_version_conflict_reports_current_version(gate: Gate) -> None:
    _setup(gate)
    gate.write_node(**person("Alice", properties={"age": 31}))  # Alice is now at version 2
    result = gate.write_node(**person("Alice", if_version=1))
    assert isinstance(result, Rejected)
    assert result.details["current_version"] == 2
    assert result.details["expected_version"] == 1
    assert gate.write_node(**person("Alice", if_version=2)).status == "written"


def test_a_wrong_merge_key_is_named_and_the_message_states_only_facts(gate: Gate) -> None:
    """Issue 10 D: `name` sits in properties; the merge key named `age` is the mistake."""
    result = gate.write_node(**person(merge_keys={"age": 3}, properties={"name": "X"}))
    assert isinstance(result, Rejected)
    assert result.error_code == "SCHEMA_MERGE_KEY_MISMATCH"
    assert result.details == {"label": "Person", "merge_keys": ["name"], "got": ["age"]}
    assert "absent" not in result.message


def test_missing_required_says_where_it_looked(gate: Gate) -> None:
    nothing = gate.write_node(**person(merge_keys={}, properties={}))
    assert isinstance(nothing, Rejected)
    assert nothing.error_code == "SCHEMA_MISSING_REQUIRED_PROPERTY"
    assert "stored node" not in nothing.message  # no node was looked up
    assert nothing.details["missing"] == ["name"]


def test_a_wrong_endpoint_label_names_the_node_and_how_it_was_written(gate: Gate) -> None:
    """Issue 42: "KNOWS may not start/end at Entity" left the reader to find which of a
    batch's or an import's nodes it meant; the refusal names it, and the label it was
    written as when the schema remapped it."""
    _setup(gate)
    item = relationship(type="WORKS_FOR", to_label="person", to_keys={"name": "Bob"})
    result = gate.write_batch(items=[{"op": "write_relationship", **item}])
    assert isinstance(result, Rejected)
    assert result.error_code == "SCHEMA_ENDPOINT_LABEL_NOT_ALLOWED"
    assert 'may not end at Person{"name":"Bob"} (written :person)' in result.message
    assert result.details["node"] == 'Person{"name":"Bob"}'
