"""The JSONL snapshot: MemoryMesh's format (or the MCP memory server's), deterministic, its
model on disk, the file rendered when asked rather than per batch."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.projections import jsonl_reference
from tests.projections.history import COMMON, clashing_log
from writegate.eventlog import Actor, Event
from writegate.gate import Gate
from writegate.language import node_identity
from writegate.projections.jsonl import FORMATS, JsonlProjector, display_name
from writegate.projections.runner import follow, rebuild, replay


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def rendered(out: Path, gate: Gate, events: list[Event], fmt: str = "memorymesh") -> Path:
    projector = JsonlProjector(out, gate.log, fmt=fmt)  # type: ignore[arg-type]
    projector.apply(events)
    projector.close()  # renders what it changed
    return out


def test_memorymesh_lines_nodes_first_with_provenance(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    records = lines(rendered(tmp_path / "g.jsonl", history_gate, events))
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
    one = rendered(tmp_path / "one.jsonl", history_gate, events)
    projector = JsonlProjector(tmp_path / "two.jsonl", history_gate.log)
    for event in events:
        projector.apply([event])
    projector.close()
    assert one.read_bytes() == (tmp_path / "two.jsonl").read_bytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_bytes_are_those_of_the_in_memory_renderer(
    tmp_path: Path, events: list[Event], history_gate: Gate, fmt: str
) -> None:
    """The model moved to SQLite; the file did not change: the history, then a log of
    clashing names, multi-key nodes and stubs, applied in batches of 3."""
    out = rendered(tmp_path / "g.jsonl", history_gate, events, fmt)
    assert out.read_bytes() == jsonl_reference.render(events, fmt)
    with Gate.open(tmp_path / "clash.db", default_actor=Actor(agent="a")) as gate:
        clashing_log(gate)
        every = list(gate.log.iter_replayed())
        projector = JsonlProjector(tmp_path / "c.jsonl", gate.log, fmt=fmt)  # type: ignore[arg-type]
        for start in range(0, len(every), 3):
            projector.apply(every[start : start + 3])
        snapshot = projector.snapshot()
        projector.close()
    assert snapshot == jsonl_reference.render(every, fmt)
    names = {r["name"] for r in map(orjson.loads, snapshot.splitlines()) if "name" in r}
    assert {"Acme (Person)", "Acme (Organization)", "Stubby", 'zürich "quoted"'} <= names
    assert node_identity("Account", {"bank": "B", "number": 7}) in names  # two keys


def test_mcp_memory_format(tmp_path: Path, events: list[Event], history_gate: Gate) -> None:
    records = lines(rendered(tmp_path / "memory.jsonl", history_gate, events, "mcp-memory"))
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


def test_a_batch_changes_the_model_and_the_file_waits_for_flush(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    """Rendering is a pass over the whole graph: a batch does not pay for it."""
    out = tmp_path / "g.jsonl"
    projector = JsonlProjector(out, history_gate.log)
    projector.apply(events[:4])
    assert projector.flush()
    early = out.read_bytes()
    projector.apply(events[4:])
    assert projector.checkpoint() == events[-1].seq
    assert out.read_bytes() == early
    assert projector.flush()
    assert out.read_bytes() == jsonl_reference.render(events, "memorymesh")
    assert not projector.flush()  # nothing moved since
    projector.close()


def test_reopening_reads_no_log_and_renders_nothing(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    """The model is on disk: a replay with nothing to apply touches neither it nor the file."""
    out = tmp_path / "g.jsonl"
    rendered(out, history_gate, events)
    before = out.stat()
    projector = JsonlProjector(out, history_gate.log)
    result = replay(history_gate.log, projector)
    projector.close()
    assert (result.applied, result.checkpoint) == (0, events[-1].seq)
    assert out.stat().st_ino == before.st_ino  # not swapped for a new rendering
    assert out.stat().st_mtime_ns == before.st_mtime_ns


def test_a_crash_before_rendering_is_rendered_by_the_next_flush(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    out = tmp_path / "g.jsonl"
    projector = JsonlProjector(out, history_gate.log)
    projector.apply(events[:4])
    projector.flush()
    early = out.read_bytes()
    projector.apply(events)  # stored with its checkpoint; the process dies before a render
    projector.model.close()
    reopened = JsonlProjector(out, history_gate.log)
    assert reopened.checkpoint() == events[-1].seq
    assert out.read_bytes() == early  # readers still see a complete, older file
    assert reopened.flush()
    assert out.read_bytes() == jsonl_reference.render(events, "memorymesh")
    reopened.close()


def test_a_snapshot_without_a_model_is_rebuilt_to_its_checkpoint(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    """A file written before the model was kept on disk records only its checkpoint:
    opening builds the model from the log up to it, as opening always did, and renders."""
    out = tmp_path / "g.jsonl"
    rendered(out, history_gate, events)
    for model in tmp_path.glob("g.jsonl.model.*"):  # the files as an older writegate left them
        model.unlink()
    (tmp_path / "g.jsonl.checkpoint.json").write_text(json.dumps({"checkpoint": events[3].seq}))
    reopened = JsonlProjector(out, history_gate.log)
    assert reopened.checkpoint() == events[3].seq
    assert out.read_bytes() == jsonl_reference.render(events[:4], "memorymesh")
    reopened.apply(events[4:])
    reopened.close()
    assert out.read_bytes() == jsonl_reference.render(events, "memorymesh")


def test_a_failed_rebuild_leaves_the_model_and_the_file(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    out = tmp_path / "g.jsonl"
    rendered(out, history_gate, events)
    complete, files = out.read_bytes(), sorted(p.name for p in tmp_path.iterdir())
    projector = JsonlProjector(out, history_gate.log)

    def dies() -> None:
        with projector.staged():
            projector.reset()
            projector.apply(events[:3])
            raise RuntimeError("the rebuild dies")

    with pytest.raises(RuntimeError):
        dies()
    assert projector.checkpoint() == events[-1].seq
    projector.close()
    assert out.read_bytes() == complete
    assert sorted(p.name for p in tmp_path.iterdir()) == files  # nothing left behind
    projector = JsonlProjector(out, history_gate.log)
    rebuild(history_gate.log, projector)
    assert projector.snapshot() == complete
    projector.close()
    assert len(list(tmp_path.glob("g.jsonl.model.*.sqlite"))) == 1  # the old one removed


def test_follow_renders_when_idle_and_on_stopping(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    out = tmp_path / "g.jsonl"
    projector = JsonlProjector(out, history_gate.log)
    stop = threading.Event()
    runner = threading.Thread(
        target=follow,
        args=(history_gate.log, {"jsonl": projector}),
        kwargs={"stop": stop, "interval": 0.01},
    )
    runner.start()
    expected = jsonl_reference.render(events, "memorymesh")
    deadline = time.monotonic() + 60
    while out.read_bytes() != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    runner.join()
    assert out.read_bytes() == expected  # rendered while following, with no one asking
    history_gate.write_node(label="Person", merge_keys={"name": "Eve"}, **COMMON)
    projector.apply(history_gate.log.read(after_seq=projector.checkpoint()).events)
    follow(history_gate.log, {"jsonl": projector}, stop=stop)  # stopped: it only renders
    assert "Eve" in {record.get("name") for record in lines(out)}
    projector.close()


def test_the_model_agrees_with_the_state_read_model(
    tmp_path: Path, events: list[Event], history_gate: Gate
) -> None:
    """The snapshot's graph and the gate's state follow the same rules."""
    projector = JsonlProjector(tmp_path / "g.jsonl", history_gate.log)
    projector.apply(events)
    state = history_gate.state.snapshot(history_gate.log.connection())
    expected_nodes = {
        row[0]: (row[1], json.loads(row[3]), bool(row[6]), row[7]) for row in state["nodes"]
    }
    conn = projector.model.conn
    rows = conn.execute("SELECT identity, label, properties, stub, remapped_from FROM jsonl_nodes")
    model_nodes = {row[0]: (row[1], json.loads(row[2]), bool(row[3]), row[4]) for row in rows}
    assert model_nodes == expected_nodes
    expected_edges = {
        row[0]: (row[1], row[2], row[3], json.loads(row[4])) for row in state["relationships"]
    }
    rows = conn.execute("SELECT identity, type, start_node, end_node, properties FROM jsonl_edges")
    model_edges = {row[0]: (row[1], row[2], row[3], json.loads(row[4])) for row in rows}
    assert model_edges == expected_edges
    projector.close()


RESOLVING = {
    "nodes": {
        "Organization": {
            "merge_keys": ["name"],
            "resolution": {"policy": "auto", "kind": "organisation"},
        },
        "Person": {"merge_keys": ["name"]},
    },
    "relationships": {
        "WORKS_FOR": {"from": ["Person"], "to": ["Organization"], "functional": True}
    },
}
RESOLVED = 'Resolved From: Organization{"name":"Acme Corporation"}'


def write_resolved(gate: Gate) -> None:
    """Acme Corporation resolved to Acme Corp, then Ada working for Acme Corp, then Globex."""
    gate.publish_schema(RESOLVING)
    for name, city in (("Acme Corp", None), ("Acme Corporation", "Springfield")):
        properties = {"city": city} if city else {}  # resolved, it says something new
        gate.write_node(
            label="Organization", merge_keys={"name": name}, properties=properties, **COMMON
        )
    gate.write_node(
        label="Organization", merge_keys={"name": "Acme Corp"}, properties={"x": 1}, **COMMON
    )
    for employer in ("Acme Corp", "Globex"):
        written = gate.write_relationship(
            type="WORKS_FOR",
            from_label="Person",
            from_keys={"name": "Ada"},
            to_label="Organization",
            to_keys={"name": employer},
            endpoint_policy="merge_endpoints",
            **COMMON,
        )
        assert written.status == "written", written


def test_a_resolved_write_says_where_it_came_from(tmp_path: Path) -> None:
    """As a remap shows ``Schema Remap From``, a write entity resolution landed on an
    existing node shows ``Resolved From`` (the identity the writer named), kept by later
    writes as the remap is; and a functional relationship replaced is not a current fact."""
    out = tmp_path / "g.jsonl"
    with Gate.open(tmp_path / "log.db", default_actor=Actor(agent="a")) as gate:
        write_resolved(gate)
        projector = JsonlProjector(out, gate.log)
        replay(gate.log, projector)
        projector.close()
    records = lines(out)
    acme = next(r for r in records if r.get("name") == "Acme Corp")
    assert RESOLVED in acme["metadata"]
    edges = [(r["from"], r["to"]) for r in records if r["type"] == "edge"]
    assert edges == [("Ada", "Globex")]  # current facts only


def test_a_model_of_an_older_shape_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    """A model file from before the ``resolved_from`` column holds nodes rendered without
    their ``Resolved From`` line: opening rebuilds it from the log (as a snapshot without
    a model), not patched with a column that would leave them as they were."""
    out = tmp_path / "g.jsonl"
    with Gate.open(tmp_path / "log.db", default_actor=Actor(agent="a")) as gate:
        write_resolved(gate)
        projector = JsonlProjector(out, gate.log)
        replay(gate.log, projector)
        projector.close()
        current = out.read_bytes()
        (old,) = tmp_path.glob("g.jsonl.model.*.sqlite")
        with sqlite3.connect(old) as conn:  # as the model before the breadcrumb stored it
            conn.executescript(OLD_NODES)
            for identity, stored in conn.execute("SELECT identity, lines FROM jsonl_nodes"):
                kept = [line for line in orjson.loads(stored) if not line.startswith("Resolved")]
                conn.execute(
                    "UPDATE jsonl_nodes SET lines = ? WHERE identity = ?",
                    (orjson.dumps(kept), identity),
                )
        conn.close()
        out.write_bytes(current.replace(b"Resolved From", b"?"))  # as rendered from it
        reopened = JsonlProjector(out, gate.log)
        assert reopened.checkpoint() == gate.log.head()[0]
        reopened.close()
    assert out.read_bytes() == current
    assert not old.exists()  # the untrusted model removed


OLD_NODES = """
ALTER TABLE jsonl_nodes RENAME TO newer;
CREATE TABLE jsonl_nodes (
    identity TEXT PRIMARY KEY, label TEXT NOT NULL, name TEXT NOT NULL,
    properties BLOB NOT NULL, remapped_from TEXT, stub INTEGER NOT NULL, lines BLOB NOT NULL
) WITHOUT ROWID;
INSERT INTO jsonl_nodes SELECT identity, label, name, properties, remapped_from, stub, lines
FROM newer;
DROP TABLE newer;
"""
