"""A retraction in the JSONL snapshot and PROV-O: the facts it took back gone from the
snapshot (the one reverted saying its old value, the one kept its other support), their
versions ``prov:wasInvalidatedBy`` the retraction's activity; put back by its undoing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rdflib import Graph
from rdflib.namespace import PROV

from tests.retracted import world
from writegate.gate import Gate
from writegate.gate.retraction import RetractResult
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.prov import ProvProjector, node_iri


def snapshot(gate: Gate, out: Path) -> dict[str, dict[str, Any]]:
    projector = JsonlProjector(out, gate.log, fmt="memorymesh")
    projector.apply(list(gate.log.iter_events(after_seq=projector.checkpoint())))
    projector.close()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return {r["name"]: r for r in records if r.get("type") == "node"}


def test_the_snapshot_and_prov_follow_a_retraction_and_its_undoing(
    gate: Gate, tmp_path: Path
) -> None:
    world(gate)
    out = tmp_path / "g.jsonl"
    before = snapshot(gate, out)
    done = gate.retract(source="S", reason="hoax")
    assert isinstance(done, RetractResult)
    after = snapshot(gate, out)
    assert "Ann" not in after
    assert "Cleo" not in after
    assert "Age: 20" in after["Bob"]["metadata"]  # back to T's version
    assert "Supported By: T" in after["Eve"]["metadata"]
    assert gate.unretract(done.retraction or "").status == "ok"
    assert snapshot(gate, out) == before
    rebuilt = snapshot(gate, tmp_path / "again.jsonl")  # a replay from the start: the same
    assert rebuilt == before

    projector = ProvProjector(tmp_path / "prov.nt", log=gate.log)
    projector.apply(list(gate.log.iter_events()))
    graph: Graph = projector.graph()
    projector.close()
    ann = node_iri('Person{"name":"Ann"}')
    [activity] = graph.objects(ann + "/v1", PROV.wasInvalidatedBy)
    assert (ann + "/v2", PROV.wasGeneratedBy, activity) not in graph
    assert (ann + "/v3", PROV.specializationOf, ann) in graph  # put back
