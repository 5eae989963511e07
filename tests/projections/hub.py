"""A small graph of people who know each other, with a hub, for the walk's tests."""

from __future__ import annotations

from tests.conftest import ROOT
from writegate.gate import Gate
from writegate.language import node_identity

SCHEMA = ROOT / "fixtures" / "conflict_schema.yaml"


def who(name: str) -> str:
    return node_identity("Person", {"name": name})


def knows(gate: Gate, a: str, b: str) -> None:
    written = gate.write_relationship(
        type="KNOWS",
        from_label="Person",
        from_keys={"name": a},
        to_label="Person",
        to_keys={"name": b},
        source="chat",
        extraction_method="llm",
        reliability=0.8,
        endpoint_policy="merge_endpoints",
    )
    assert written.status == "written", written


def hub(gate: Gate) -> Gate:
    """Ann knows four and is known by Fay; Bea knows Cy."""
    gate.publish_schema(SCHEMA)
    for friend in ("Bea", "Cy", "Di", "Ed"):
        knows(gate, "Ann", friend)
    knows(gate, "Fay", "Ann")
    knows(gate, "Bea", "Cy")
    return gate
