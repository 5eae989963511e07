"""``rebuild --regate``: history replayed through today's vocabulary; the log untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import SEED_SCHEMA, seed_document
from writegate.eventlog import Actor
from writegate.gate import Gate, WriteRelationshipResult
from writegate.projections.graph import BoltTarget, GraphProjector
from writegate.projections.regate import Regater
from writegate.projections.runner import rebuild


def consolidated_schema() -> dict[str, Any]:
    """The seed schema, having learned that ``Gizmo`` means ``Device`` and that ``KNOWS`` is
    one of the synonyms of ``ACQUAINTED_WITH`` (seed 003's vocabulary consolidation)."""
    document = seed_document()
    document["nodes"]["Device"] = {
        "merge_keys": ["name"],
        "required": ["name"],
        "remaps_from": ["Gizmo"],
    }
    knows = document["relationships"].pop("KNOWS")
    document["relationships"]["ACQUAINTED_WITH"] = {**knows, "remaps_from": ["KNOWS"]}
    return document


def labelled(snapshot: dict[str, Any]) -> dict[str, str]:
    return {props["name"]: labels[0] for labels, props in snapshot["nodes"]}


def test_regate_moves_history_to_the_current_vocabulary(
    history_gate: Gate, bolt: BoltTarget
) -> None:
    knows: dict[str, Any] = {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": "Alice"},
        "to_label": "Person",
        "to_keys": {"name": "Bob"},
    }
    written = history_gate.write_relationship(**knows, source="s", extraction_method="api")
    assert isinstance(written, WriteRelationshipResult)
    assert written.created
    projector = GraphProjector(bolt)
    try:
        rebuild(history_gate.log, projector)
        before = projector.snapshot()
        head_before = history_gate.log.head()

        assert history_gate.publish_schema(consolidated_schema()).status == "published"
        history_gate.refresh_schema_cache()
        regater = Regater(history_gate.current_schema().registry)
        rebuild(history_gate.log, projector, regater=regater)
        after = projector.snapshot()
    finally:
        projector.close()

    assert labelled(before)["Widget"] == "Entity"
    assert labelled(after)["Widget"] == "Device"
    widget = next(p for labels, p in after["nodes"] if p["name"] == "Widget")
    assert widget["_schema_remap_from"] == ":Gizmo"  # the original name survives
    assert len(after["nodes"]) == len(before["nodes"])  # every node kept
    assert {labelled(after)[n] for n in ("Alice", "Bob", "Carol")} == {"Person"}
    types_before = sorted(r[0] for r in before["relationships"])
    types_after = sorted(r[0] for r in after["relationships"])
    assert "KNOWS" in types_before
    assert "KNOWS" not in types_after
    assert types_after.count("ACQUAINTED_WITH") == types_before.count("KNOWS")
    assert len(types_after) == len(types_before)

    # the log was not touched: the same head, a valid chain, state equal to its replay
    assert history_gate.log.head()[0] == head_before[0] + 1  # only the new schema event
    assert history_gate.verify().ok


def test_regate_follows_identities_into_deletes(db_path: Path) -> None:
    """A node written under an old label and deleted later is deleted under its new label."""
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        p: dict[str, Any] = {"source": "s", "extraction_method": "api", "actor": Actor(agent="a")}
        gate.write_node(label="Gizmo", merge_keys={"name": "W"}, **p)
        gate.delete_node(label="Entity", merge_keys={"name": "W"}, **p)
        gate.publish_schema(consolidated_schema())
        gate.refresh_schema_cache()
        regater = Regater(gate.current_schema().registry)
        rewritten = [regater.event(e) for e in gate.log.iter_events()]
    written, deleted = (e for e in rewritten if e.type.startswith("node."))
    assert written.payload["node"]["label"] == deleted.payload["node"]["label"] == "Device"
    assert written.payload["node"]["identity"] == deleted.payload["node"]["identity"]


def test_regate_follows_identities_into_corroborations(db_path: Path) -> None:
    """A node corroborated under an old label, and a relationship under an old type, are
    corroborated under the new ones, on the corroboration streams of the new identities."""
    with Gate.open(db_path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        p: dict[str, Any] = {"extraction_method": "api", "actor": Actor(agent="a")}
        knows: dict[str, Any] = {
            "type": "KNOWS",
            "from_label": "Person",
            "from_keys": {"name": "Ada"},
            "to_label": "Person",
            "to_keys": {"name": "Bob"},
        }
        for source in ("s", "t"):
            gate.write_node(label="Gizmo", merge_keys={"name": "W"}, source=source, **p)
            for name in ("Ada", "Bob"):
                gate.write_node(label="Person", merge_keys={"name": name}, source=source, **p)
            gate.write_relationship(**knows, source=source, **p)
        gate.publish_schema(consolidated_schema())
        gate.refresh_schema_cache()
        regater = Regater(gate.current_schema().registry)
        rewritten = [regater.event(e) for e in gate.log.iter_events()]
    by_type = {e.type: e for e in rewritten}
    device = 'Device{"name":"W"}'
    heard = [e for e in rewritten if e.type == "node.corroborated"]
    assert heard[0].payload["node"]["identity"] == device
    assert list(heard[0].streams) == [f"corroboration:node:{device}"]
    said = by_type["relationship.corroborated"]
    assert said.payload["type"] == "ACQUAINTED_WITH"
    assert said.payload["to"] == 'Person{"name":"Bob"}'
    assert said.payload["identity"] == by_type["relationship.written"].payload["identity"]
    assert list(said.streams) == [f"corroboration:rel:{said.payload['identity']}"]
