"""A write refused as a probable duplicate is audited with what was asked and the
candidates the scorer named, with its reasons: a reviewer sees the two side by side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.audit.duplicates import audit_duplicates

SCHEMA = {
    "nodes": {
        "Person": {
            "merge_keys": ["name"],
            "properties": {"name": {"type": "string"}, "city": {"type": "string"}},
            "resolution": {"policy": "propose"},
        }
    }
}


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=Actor(agent="a")) as g:
        assert g.publish_schema(SCHEMA).status == "published"
        yield g


def test_a_refused_duplicate_keeps_the_write_and_the_scorers_reasons(gate: Gate) -> None:
    kept = gate.write_node(
        label="Person", merge_keys={"name": "Alan Turing"}, source="s", extraction_method="api"
    )
    assert isinstance(kept, WriteNodeResult), kept
    refused = gate.write_node(
        label="Person",
        merge_keys={"name": "alan  turing"},
        properties={"city": "Wilmslow"},
        source="s",
        extraction_method="api",
    )
    assert isinstance(refused, Rejected), refused
    [entry] = audit_duplicates(gate.log).entries
    assert entry.outcome == "proposed"
    assert entry.asked is not None
    assert (entry.asked.label, entry.asked.merge_keys) == ("Person", {"name": "alan  turing"})
    assert entry.asked.properties == {"city": "Wilmslow"}
    [candidate] = entry.candidates
    assert (candidate.label, candidate.merge_keys) == ("Person", {"name": "Alan Turing"})
    assert candidate.score == 1.0
    assert candidate.reasons == ["equal once normalized: 'alan turing'"]
