"""The example schema (``fixtures/schema.yaml``) asks for entity resolution as the README
says: people and organisations are proposed, never silently duplicated, and a writer who
knows better says ``resolution: "new"``."""

from __future__ import annotations

from typing import Any

from writegate.gate import Gate, Rejected, WriteNodeResult

HR: dict[str, Any] = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.95}


def write(gate: Gate, label: str, name: str, **extra: Any) -> object:
    return gate.write_node(
        label=label,
        merge_keys={"name": name},
        source="hr.csv",
        extraction_method="parsed",
        reliability=0.95,
        **extra,
    )


def test_people_and_organisations_are_proposed(example_gate: Gate) -> None:
    assert isinstance(write(example_gate, "Person", "Grace Hopper"), WriteNodeResult)
    assert isinstance(
        write(example_gate, "Organization", "Analytical Engines Ltd"), WriteNodeResult
    )
    head = example_gate.log.head()
    for label, variant in (("Person", "grace  hopper"), ("Organization", "Analytical Engines")):
        refused = write(example_gate, label, variant)
        assert isinstance(refused, Rejected), refused
        assert refused.error_code == "POSSIBLE_DUPLICATE"
        assert refused.details["candidates"]
    assert example_gate.log.head() == head  # refusals append nothing
    kept_apart = write(example_gate, "Person", "grace  hopper", resolution="new")
    assert isinstance(kept_apart, WriteNodeResult)


def test_an_equal_email_is_the_same_person(example_gate: Gate) -> None:
    write(example_gate, "Person", "Ada Lovelace", properties={"email": "ada@example.org"})
    refused = write(
        example_gate, "Person", "Augusta Ada King", properties={"email": "ADA@example.org"}
    )
    assert isinstance(refused, Rejected)
    assert refused.error_code == "POSSIBLE_DUPLICATE"


def test_other_labels_are_not_resolved(example_gate: Gate) -> None:
    claim = {**HR, "properties": {"tier": 1}}
    for name in ("billing", "Billing"):
        out = example_gate.write_node(label="Service", merge_keys={"name": name}, **claim)
        assert isinstance(out, WriteNodeResult), out
