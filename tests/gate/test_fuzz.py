"""Arbitrary input never crashes the gate: it is written, or rejected with a documented code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import SEED_SCHEMA
from writegate.gate import ErrorCode, Gate, Rejected

CODES = {c.value for c in ErrorCode}
INJECTIONS = ["`", "'", '"', "{", "}", "//", "\n", " ", ")", "-[", ";", "\\", ":", "$", "\x00"]

names = st.one_of(
    st.sampled_from(
        [
            "Person",
            ":person",
            "person",
            "Organization",
            "Entity",
            "KNOWS",
            "WORKS_FOR",
            "name",
            "age",
            "confidence",
            "_stub",
            "ZZZ",
        ]
    ),
    st.text(max_size=12),
    st.builds(
        lambda a, inj, b: a + inj + b,
        st.sampled_from(["Person", "n", "KNOWS"]),
        st.sampled_from(INJECTIONS),
        st.text(max_size=6),
    ),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
maps = st.dictionaries(names, values, max_size=4)
anything = st.one_of(values, maps, st.tuples(st.integers()), st.sets(st.integers(), max_size=2))
reliability = st.one_of(st.floats(allow_nan=True), st.integers(), st.text(max_size=3), st.none())


@pytest.fixture(scope="module")
def fuzz_gate(tmp_path_factory: pytest.TempPathFactory) -> Gate:
    g = Gate.open(Path(tmp_path_factory.mktemp("fuzz")) / "fuzz.db")
    g.publish_schema(SEED_SCHEMA)
    g.write_node(label="Person", merge_keys={"name": "Alice"}, source="s", extraction_method="api")
    return g


def _check(result: Any) -> None:
    if isinstance(result, Rejected):
        assert result.error_code in CODES
        assert result.message
    else:
        assert result.status in {"written", "deleted"}


FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(
    label=st.one_of(names, anything),
    keys=st.one_of(maps, anything),
    props=st.one_of(maps, anything),
    method=st.one_of(st.sampled_from(["api", "llm", "manual", "parsed"]), names),
    rel=reliability,
    source=st.one_of(st.text(max_size=10), anything),
)
def test_write_node_never_raises(
    fuzz_gate: Gate, label: Any, keys: Any, props: Any, method: Any, rel: Any, source: Any
) -> None:
    before = fuzz_gate.log.head()
    result = fuzz_gate.write_node(
        label=label,
        merge_keys=keys,
        properties=props,
        source=source,
        extraction_method=method,
        reliability=rel,
    )
    _check(result)
    if isinstance(result, Rejected):
        assert fuzz_gate.log.head() == before


@FUZZ
@given(
    rtype=st.one_of(names, anything),
    from_label=names,
    from_keys=st.one_of(maps, anything),
    to_label=names,
    to_keys=maps,
    props=st.one_of(maps, anything),
    policy=st.one_of(st.sampled_from(["fail_if_missing", "merge_endpoints"]), names),
)
def test_write_relationship_never_raises(
    fuzz_gate: Gate,
    rtype: Any,
    from_label: Any,
    from_keys: Any,
    to_label: Any,
    to_keys: Any,
    props: Any,
    policy: Any,
) -> None:
    before = fuzz_gate.log.head()
    result = fuzz_gate.write_relationship(
        type=rtype,
        from_label=from_label,
        from_keys=from_keys,
        to_label=to_label,
        to_keys=to_keys,
        properties=props,
        source="fuzz",
        extraction_method="llm",
        endpoint_policy=policy,
    )
    _check(result)
    if isinstance(result, Rejected):
        assert fuzz_gate.log.head() == before


@given(injection=st.sampled_from(INJECTIONS), tail=st.text(max_size=8))
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_injection_shaped_identifiers_are_rejected(
    fuzz_gate: Gate, injection: str, tail: str
) -> None:
    if injection == ":":  # a single leading colon is label syntax; in the middle it is not
        injection = "a:"
    bad = "Person" + injection + tail
    common: dict[str, Any] = {"source": "fuzz", "extraction_method": "llm"}
    calls = [
        fuzz_gate.write_node(label=bad, merge_keys={"name": "x"}, **common),
        fuzz_gate.write_node(
            label="Person", merge_keys={"name": "x"}, properties={bad: 1}, **common
        ),
        fuzz_gate.write_node(label="Person", merge_keys={bad: "x"}, **common),
        fuzz_gate.write_relationship(
            type=bad,
            from_label="Person",
            from_keys={"name": "Alice"},
            to_label="Person",
            to_keys={"name": "Alice"},
            **common,
        ),
    ]
    for result in calls:
        assert isinstance(result, Rejected)
        assert result.error_code == "INVALID_IDENTIFIER", result.message
