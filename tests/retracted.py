"""A log where a source S said things others rely on: retraction's tests share it."""

from __future__ import annotations

from typing import Any

from tests.conftest import person
from writegate.eventlog import Actor
from writegate.gate import Gate, ObservationResult
from writegate.gate.merges.operations import MergeResult
from writegate.language import node_identity

REVIEWER = Actor(agent="reviewer")


def named(name: str) -> str:
    return node_identity("Person", {"name": name})


def said(gate: Gate, name: str) -> dict[str, Any] | None:
    """A node's properties and the confidence it reads at (None: not held)."""
    nodes = gate.reader().open_nodes([{"label": "Person", "merge_keys": {"name": name}}]).nodes
    if not nodes:
        return None
    [node] = nodes
    p = node.provenance
    confidence = p.corroborated_confidence if p.corroborated_confidence else p.confidence
    return {"properties": node.properties, "confidence": round(confidence, 6)}


def world(gate: Gate) -> dict[str, Any]:
    """S says three facts (two citing its observation), T and S both say Eve, S's evidence
    merged two of T's duplicates."""
    observed = gate.record_observation(
        text="Ann is 30 and Cleo is 40, says S.", source="S", extraction_method="manual"
    )
    assert isinstance(observed, ObservationResult)
    gate.write_node(**person("Ann", source="S", observations=[observed.observation_id]))
    gate.write_node(**person("Bob", source="T", properties={"age": 20}))
    gate.write_node(**person("Bob", source="S", properties={"age": 21}))
    gate.write_node(
        **person("Cleo", source="S", properties={"age": 40}, observations=[observed.observation_id])
    )
    gate.write_node(**person("Eve", source="S", properties={"age": 50}))
    heard = gate.write_node(
        **person("Eve", source="T", extraction_method="api", properties={"age": 50})
    )
    assert heard.status == "corroborated"
    gate.write_node(**person("Dup", source="T", properties={"age": 60}))
    gate.write_node(**person("Dupe", source="T", properties={"age": 60}))
    merged = gate.merge_nodes(
        label="Person",
        survivor_keys={"name": "Dup"},
        duplicate_keys={"name": "Dupe"},
        source="S",
        extraction_method="manual",
        actor=REVIEWER,
    )
    assert isinstance(merged, MergeResult)
    return {"observation": observed.observation_id, "merge": merged.merge}


NAMES = ("Ann", "Bob", "Cleo", "Eve", "Dup")
