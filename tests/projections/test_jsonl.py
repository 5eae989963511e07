"""The JSONL snapshot: MemoryMesh's format (or the MCP memory server's), deterministic."""

from __future__ import annotations

import json
from pathlib import Path

from eventlog import Event
from projections.jsonl import JsonlProjector, display_name


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_memorymesh_lines_nodes_first_with_provenance(tmp_path: Path, events: list[Event]) -> None:
    out = tmp_path / "g.jsonl"
    JsonlProjector(out).apply(events)
    records = lines(out)
    kinds = [r["type"] for r in records]
    assert kinds == sorted(kinds, key=lambda k: k != "node")  # nodes, then edges
    alice = next(r for r in records if r.get("name") == "Alice")
    assert alice["nodeType"] == "Person"
    assert "Age: 31" in alice["metadata"]  # type: ignore[operator]
    assert "Confidence: 1.0" in alice["metadata"]  # type: ignore[operator]
    assert "Source: hr.csv" in alice["metadata"]  # type: ignore[operator]
    assert not any(m.startswith("Skills") for m in alice["metadata"])  # type: ignore[union-attr]
    bob = next(r for r in records if r.get("name") == "Bob")
    assert "Schema Remap From: :person" in bob["metadata"]  # type: ignore[operator]
    [edge] = [r for r in records if r["type"] == "edge"]
    assert edge == {
        "type": "edge",
        "from": "Alice",
        "to": "Initech",
        "edgeType": "WORKS_FOR",
        "weight": 0.9 * 0.85,
    }


def test_same_log_same_bytes(tmp_path: Path, events: list[Event]) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    JsonlProjector(one).apply(events)
    projector = JsonlProjector(two)
    for event in events:
        projector.apply([event])
    assert one.read_bytes() == two.read_bytes()


def test_mcp_memory_format(tmp_path: Path, events: list[Event]) -> None:
    out = tmp_path / "memory.jsonl"
    JsonlProjector(out, fmt="mcp-memory").apply(events)
    records = lines(out)
    assert {r["type"] for r in records} == {"entity", "relation"}
    alice = next(r for r in records if r.get("name") == "Alice")
    assert alice["entityType"] == "Person"
    assert "Age: 31" in alice["observations"]  # type: ignore[operator]
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


def test_a_crash_between_commit_and_swap_is_repaired_on_open(
    tmp_path: Path, events: list[Event]
) -> None:
    out = tmp_path / "g.jsonl"
    projector = JsonlProjector(out)
    projector.apply(events[:4])
    stale = out.read_bytes()
    projector.apply(events)
    complete = out.read_bytes()
    # as if the process died after the state committed but before the new file was swapped in
    projector.store.conn.execute("UPDATE jsonl_rendered SET seq = ?", (events[3].seq,))
    out.write_bytes(stale)
    projector.close()
    JsonlProjector(out).close()
    assert out.read_bytes() == complete
