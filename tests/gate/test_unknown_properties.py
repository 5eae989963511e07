"""A property the schema does not declare, written to a label or type that allows them, is
accepted and listed in the result (``unknown_properties``), so the writer learns it is off
the schema; a retried write answers the same from the log; none: the field is left out."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import writegate
from tests.conftest import person, relationship
from writegate.gate import Gate, WriteNodeResult, WriteRelationshipResult


def test_an_undeclared_property_is_listed_in_the_result(gate: Gate) -> None:
    args = person(properties={"age": 30, "mood": "calm", "hat": "red"}, idempotency_key="k-1")
    written = gate.write_node(**args)
    assert isinstance(written, WriteNodeResult), written
    assert written.unknown_properties == ["hat", "mood"]
    assert gate.write_node(**args) == written  # a retry: the same answer, from the log

    declared = gate.write_node(**person(properties={"age": 31}))
    assert isinstance(declared, WriteNodeResult), declared
    assert "unknown_properties" not in declared.model_dump()


def test_an_undeclared_relationship_property_is_listed_in_the_result(gate: Gate) -> None:
    for name in ("Alice", "Bob"):
        assert isinstance(gate.write_node(**person(name)), WriteNodeResult)
    edge = gate.write_relationship(**relationship(properties={"since": 1990}))
    assert isinstance(edge, WriteRelationshipResult), edge
    assert edge.unknown_properties == ["since"]


def test_the_cli_says_which_properties_are_off_the_schema(gate: Gate, db_path: Path) -> None:
    gate.close()
    done = writegate(db_path, "write", "node", "Person:name=Ada", "-p", "age=36", "-p",
                     "mood=calm", "--source", "s", "--method", "manual")  # fmt: skip
    assert "  not in the schema (allowed): mood" in done.stdout.splitlines()
    quiet = writegate(db_path, "write", "node", "Person:name=Bo", "-p", "age=3",
                      "--source", "s", "--method", "manual")  # fmt: skip
    assert "not in the schema" not in quiet.stdout
