"""What the tests of personal data write: people who work at Acme (``fixtures/personal_schema.yaml``)."""

from __future__ import annotations

from typing import Any

from writegate.gate import Gate

CLAIM: dict[str, Any] = {"source": "test", "extraction_method": "manual"}


def person(gate: Gate, name: str, **properties: Any) -> Any:
    """A Person named ``name`` written with ``properties``: the gate's answer."""
    return gate.write_node(
        label="Person", merge_keys={"name": name}, properties=properties, **CLAIM
    )


def works_at_acme(gate: Gate, *names: str) -> None:
    """The company Acme, and each person ``names`` names WORKS_AT it."""
    gate.write_node(label="Company", merge_keys={"name": "Acme"}, **CLAIM)
    for name in names:
        linked = gate.write_relationship(
            type="WORKS_AT",
            from_label="Person",
            from_keys={"name": name},
            to_label="Company",
            to_keys={"name": "Acme"},
            **CLAIM,
        )
        assert linked.status == "written", linked
