"""Scopes in the graph store: a node in a declared scope carries the label `scope:<name>`,
so the store's own label-based access control can keep to what the gate keeps to; a log
that declares no scopes projects exactly as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT
from writegate.gate import Gate
from writegate.projections.graph import BoltTarget, GraphProjector
from writegate.projections.runner import replay

SCHEMA: dict[str, Any] = {
    "name": "scoped",
    "nodes": {
        "Employee": {"merge_keys": ["name"], "scope": "hr"},
        "Service": {"merge_keys": ["name"], "scope": "eng"},
        "Plain": {"merge_keys": ["name"]},
    },
    "relationships": {"RUNS": {}},
}
WRITE: dict[str, Any] = {"source": "test", "extraction_method": "manual", "reliability": 0.9}


@pytest.fixture
def scoped_gate(db_path: Path) -> Iterator[Gate]:
    g = Gate.open(db_path, default_actor=AGENT)
    assert g.publish_schema(SCHEMA).status == "published"
    yield g
    g.close()


def labels_by_name(gate: Gate, target: BoltTarget) -> dict[str, list[str]]:
    projector = GraphProjector(target)
    try:
        replay(gate.log, projector)
        snapshot = projector.snapshot()
    finally:
        projector.close()
    return {props["name"]: labels for labels, props in snapshot["nodes"]}


def test_a_node_carries_its_scope_as_a_label(scoped_gate: Gate, bolt: BoltTarget) -> None:
    for label, name in (("Employee", "Ada"), ("Service", "billing"), ("Plain", "lobby")):
        written = scoped_gate.write_node(label=label, merge_keys={"name": name}, **WRITE)
        assert written.status == "written", written
    labels = labels_by_name(scoped_gate, bolt)
    assert labels == {
        "Ada": ["Employee", "scope:hr"],
        "billing": ["Service", "scope:eng"],
        "lobby": ["Plain"],  # the implicit scope adds no label: unscoped logs look as before
    }


def test_a_stub_a_relationship_creates_takes_its_labels_scope(
    scoped_gate: Gate, bolt: BoltTarget
) -> None:
    written = scoped_gate.write_relationship(
        type="RUNS",
        from_label="Employee",
        from_keys={"name": "Ada"},
        to_label="Service",
        to_keys={"name": "billing"},
        endpoint_policy="merge_endpoints",
        **WRITE,
    )
    assert written.status == "written", written
    labels = labels_by_name(scoped_gate, bolt)
    assert labels == {"Ada": ["Employee", "scope:hr"], "billing": ["Service", "scope:eng"]}


def test_a_node_that_moves_leaves_its_old_scopes_label(db_path: Path, bolt: BoltTarget) -> None:
    chosen = {"name": "chosen", "nodes": {"Note": {"merge_keys": ["name"], "scopes": ["a", "b"]}}}
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(chosen).status == "published"
        for scope in ("a", "b"):
            written = gate.write_node(
                label="Note", merge_keys={"name": "memo"}, scope=scope, **WRITE
            )
            assert written.status == "written", written
        assert labels_by_name(gate, bolt) == {"memo": ["Note", "scope:b"]}
