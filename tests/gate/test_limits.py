"""Size and depth limits (issue 10, B and C): checked before any work, nothing appended.

The inputs that used to hang or be accepted: a property nested 200 levels deep, a 5 MB
string, a write with 10,000 properties. Each is refused with its own code, at once, and
the log and the state model are exactly as they were.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import person, state_of
from writegate.eventlog import canonical_json
from writegate.gate import Gate, GateRejection, Rejected
from writegate.gate.limits import DEFAULT_LIMITS, Limits, check_request
from writegate.gate.schema import parse_document


def nested(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for level in range(depth):
        value = {"a": value} if level % 2 else [value]
    return value


def refused(result: object, code: str) -> Rejected:
    assert isinstance(result, Rejected), result
    assert result.error_code == code, result
    return result


@pytest.mark.parametrize("depth", [200, 5_000])
def test_deep_nesting_is_an_invalid_argument_at_once(gate: Gate, depth: int) -> None:
    before = state_of(gate)
    result = gate.write_node(**person(properties={"deep": nested(depth)}))
    rejection = refused(result, "INVALID_ARGUMENT")
    assert rejection.details["limit"] == "max_depth"
    assert state_of(gate) == before


def test_a_list_longer_than_a_property_holds_is_refused_by_its_limit(gate: Gate) -> None:
    """A list of 13,000 short strings was told it was not a list of one kind."""
    before = state_of(gate)
    skills = [f"s{i}" for i in range(10_001)]
    rejection = refused(gate.write_node(**person(properties={"skills": skills})), "LIMIT_EXCEEDED")
    assert rejection.details == {
        "limit": "max_list_items", "max": 10_000, "got": 10_001, "field": "properties.skills"
    }  # fmt: skip
    assert state_of(gate) == before
    written = gate.write_node(**person(properties={"skills": skills[:10_000]}))
    assert written.status == "written", written


def test_a_five_megabyte_value_exceeds_the_value_limit(gate: Gate) -> None:
    before = state_of(gate)
    rejection = refused(
        gate.write_node(**person(properties={"notes": "x" * 5_000_000})), "LIMIT_EXCEEDED"
    )
    assert rejection.details == {
        "limit": "max_value_bytes",
        "max": DEFAULT_LIMITS.max_value_bytes,
        "got": 5_000_000,
        "field": "properties.notes",
    }
    assert state_of(gate) == before


def test_non_ascii_values_are_measured_in_utf8_bytes(gate: Gate) -> None:
    limit = DEFAULT_LIMITS.max_value_bytes
    fits = "é" * (limit // 2)  # two bytes each: exactly the limit
    assert gate.write_node(**person(properties={"notes": fits})).status == "written"
    rejection = refused(
        gate.write_node(**person(properties={"notes": fits + "é"})), "LIMIT_EXCEEDED"
    )
    assert rejection.details["got"] == limit + 2


def test_ten_thousand_properties_exceed_the_property_limit(gate: Gate) -> None:
    before = state_of(gate)
    many = {f"p{i}": i for i in range(10_000)}
    rejection = refused(gate.write_node(**person(properties=many)), "LIMIT_EXCEEDED")
    assert rejection.details["limit"] == "max_properties"
    assert rejection.details["got"] == 10_001  # the merge key counts too
    assert state_of(gate) == before


def test_batches_are_bounded_in_items_and_in_bytes(gate: Gate) -> None:
    before = state_of(gate)
    item = {"op": "write_node", **person()}
    too_many = [item] * (DEFAULT_LIMITS.max_batch_items + 1)
    rejection = refused(gate.write_batch(items=too_many), "LIMIT_EXCEEDED")
    assert rejection.details["limit"] == "max_batch_items"
    big = "y" * 60_000
    heavy = [{"op": "write_node", **person(f"p{i}", properties={"notes": big})} for i in range(200)]
    rejection = refused(gate.write_batch(items=heavy), "LIMIT_EXCEEDED")
    assert rejection.details["limit"] == "max_request_bytes"
    assert state_of(gate) == before


def test_a_batch_limit_set_above_the_default_is_the_limit(gate: Gate) -> None:
    """Issue 42, defect 4: a fixed bound of 10,000 items applied whatever the setting."""
    raised = Gate(gate.log, gate.schema, limits=Limits(max_batch_items=50_000))
    over = DEFAULT_LIMITS.max_batch_items + 1  # one more than the default allows
    items = [{"op": "write_node", **person(f"p{i}")} for i in range(over)]
    written = raised.write_batch(items=items)
    assert written.status == "written", written
    assert len(written.results) == over
    refused(raised.write_batch(items=[]), "INVALID_ARGUMENT")


def test_limits_come_from_the_gate_then_the_schema_then_the_defaults(gate: Gate) -> None:
    assert gate.limits() == DEFAULT_LIMITS
    document = gate.current_schema().registry.document  # type: ignore[attr-defined]
    tight = document.model_copy(update={"limits": Limits(max_value_bytes=100)})
    assert gate.publish_schema(tight).status == "published"
    gate.refresh_schema_cache()
    assert gate.limits().max_value_bytes == 100
    refused(gate.write_node(**person(properties={"notes": "z" * 101})), "LIMIT_EXCEEDED")
    explicit = Gate(gate.log, gate.schema, limits=Limits(max_value_bytes=1000))
    assert explicit.write_node(**person(properties={"notes": "z" * 101})).status == "written"


def test_a_schema_without_limits_keeps_its_version() -> None:
    bare = parse_document({"nodes": {"A": {}}})
    before_limits = bare.model_dump(mode="json", by_alias=True)
    del before_limits["limits"]  # the body a version was computed from before limits existed
    digest = hashlib.sha256(canonical_json(before_limits)).hexdigest()[:16]
    assert bare.version() == f"sha256:{digest}"
    limited = parse_document({"nodes": {"A": {}}, "limits": {"max_depth": 8}})
    assert limited.version() != bare.version()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=40,
)


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_depth_check_agrees_with_a_recursive_definition(value: Any) -> None:
    limits = Limits(max_depth=4, max_value_bytes=10**9, max_properties=10**6)
    try:
        check_request({"properties": value}, limits)
        accepted = True
    except GateRejection:
        accepted = False
    assert accepted == (1 + depth_of(value) <= 4)
