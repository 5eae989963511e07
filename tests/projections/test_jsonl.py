"""The JSONL snapshot: MemoryMesh's format (or the MCP memory server's), deterministic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from writegate.eventlog import Event
from writegate.gate import Gate
from writegate.projections.jsonl import JsonlProjector, display_name


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_memorymesh_lines_nodes_first_with_provenance(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    out = tmp_path / "g.jsonl"
    JsonlProjector(out, history_gate.log).apply(events)
    records = lines(out)
    kinds = [r["type"] for r in records]
    assert kinds == sorted(kinds, key=lambda k: k != "node")  # nodes, then edges
    alice = next(r for r in records if r.get("name") == "Alice")
    assert alice["nodeType"] == "Person"
    assert "Age: 31" in alice["metadata"]
    assert "Confidence: 1.0" in alice["metadata"]
    assert "Source: hr.csv" in alice["metadata"]
    assert not any(m.startswith("Skills") for m in alice["metadata"])
    bob = next(r for r in records if r.get("name") == "Bob")
    assert "Schema Remap From: :person" in bob["metadata"]
    [edge] = [r for r in records if r["type"] == "edge"]
    assert edge == {
        "type": "edge",
        "from": "Alice",
        "to": "Initech",
        "edgeType": "WORKS_FOR",
        "weight": 0.9 * 0.85,
    }


def test_same_log_same_bytes(tmp_path: Path, events: list[Event], history_gate: Gate) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    JsonlProjector(one, history_gate.log).apply(events)
    projector = JsonlProjector(two, history_gate.log)
    for event in events:
        projector.apply([event])
    assert one.read_bytes() == two.read_bytes()


def test_mcp_memory_format(tmp_path: Path, events: list[Event], history_gate: Gate) -> None:
    out = tmp_path / "memory.jsonl"
    JsonlProjector(out, history_gate.log, fmt="mcp-memory").apply(events)
    records = lines(out)
    assert {r["type"] for r in records} == {"entity", "relation"}
    alice = next(r for r in records if r.get("name") == "Alice")
    assert alice["entityType"] == "Person"
    assert "Age: 31" in alice["observations"]
    assert {
        "type": "relation",
        "from": "Alice",
        "to": "Initech",
        "relationType": "WORKS_FOR",
    } in records


def test_display_names_follow_seed_001() -> None:
    assert display_name("currentLocation") == "Current Location"
    assert display_name("role") == "Role"
    assert display_name("extraction_method") == "Extraction Method"


def test_a_crash_between_file_and_checkpoint_is_repaired_on_open(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    out = tmp_path / "g.jsonl"
    projector = JsonlProjector(out, history_gate.log)
    projector.apply(events[:4])
    early = out.read_bytes()
    projector.apply(events)
    complete = out.read_bytes()
    # the new file was swapped in, but the process died before recording the checkpoint
    projector.meta_path.write_text(json.dumps({"checkpoint": events[3].seq}))
    reopened = JsonlProjector(out, history_gate.log)
    assert reopened.checkpoint() == events[3].seq
    assert out.read_bytes() == early  # the file matches its checkpoint again
    reopened.apply(events[4:])
    assert out.read_bytes() == complete


def test_the_memory_model_agrees_with_the_state_read_model(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    """The snapshot's graph and the gate's state follow the same rules."""
    projector = JsonlProjector(tmp_path / "g.jsonl", history_gate.log)
    projector.apply(events)
    state = history_gate.state.snapshot(history_gate.log.connection())
    expected_nodes = {
        row[0]: (row[1], json.loads(row[3]), bool(row[6]), row[7]) for row in state["nodes"]
    }
    model_nodes = {
        identity: (n.label, n.properties, n.stub, n.remapped_from)
        for identity, n in projector.model.nodes.items()
    }
    assert model_nodes == expected_nodes
    expected_edges = {
        row[0]: (row[1], row[2], row[3], json.loads(row[4])) for row in state["relationships"]
    }
    model_edges = {
        identity: (e.type, e.start, e.end, e.properties)
        for identity, e in projector.model.edges.items()
    }
    assert model_edges == expected_edges
