"""Who wrote what, through a merge and its undoing: the operator who merges or unmerges is
the actor of those events, but the values and relationships they move or put back stay
their writers' — in the state read model (``show``), the audit trail (``audit node``) and
the JSONL snapshot ("Written By")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import as_json
from tests.conftest import FIXTURES
from tests.gate.test_merge import DUP, build
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.merges.operations import MergeResult, UnmergeResult
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.runner import replay

WRITER, OPERATOR = Actor(agent="ada-bot"), Actor(agent="operator:root", transport="cli")
CLAIM: dict[str, Any] = {"source": "review", "extraction_method": "manual"}
DUPLICATE = 'Person{"name":"alan turing"}'


@pytest.fixture
def gate(db_path: Path) -> Iterator[Gate]:
    with Gate.open(db_path, default_actor=WRITER) as g:
        document = yaml.safe_load((FIXTURES / "conflict_schema.yaml").read_text())
        assert g.publish_schema(document).status == "published"
        yield g


def merged_and_undone(gate: Gate) -> None:
    build(gate)  # every node and relationship written by WRITER
    merged = gate.merge_nodes(
        label="Person", survivor_keys={"name": "Alan Turing"}, duplicate_keys=DUP,
        reason="the same person", actor=OPERATOR, **CLAIM,
    )  # fmt: skip
    assert isinstance(merged, MergeResult), merged
    undone = gate.unmerge_nodes(merge=merged.merge, actor=OPERATOR, **CLAIM)
    assert isinstance(undone, UnmergeResult), undone


def written_by(snapshot: Path) -> dict[str, Any]:
    """Each JSONL node's name -> its "Written By" line."""
    found = {}
    for line in snapshot.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "node":
            [by] = [m for m in record["metadata"] if m.startswith("Written By:")]
            found[record["name"]] = by
    return found


def test_an_unmerge_gives_back_who_wrote_the_duplicate_and_its_relationships(
    gate: Gate, db_path: Path, tmp_path: Path
) -> None:
    merged_and_undone(gate)
    conn = gate.log.connection()
    duplicate = gate.state.node(conn, DUPLICATE)
    assert duplicate is not None
    assert duplicate.updated_by == "ada-bot"
    edges = gate.state.relationships_of(conn, DUPLICATE)
    assert len(edges) == 4
    for attached in edges:
        edge = gate.state.relationship(conn, attached.identity)
        assert edge is not None
        assert edge.updated_by == "ada-bot", edge
    gate.close()

    shown = as_json(db_path, "show", "node", "Person", "name=alan turing", "--format", "json")
    assert shown["last_agent"] == "ada-bot"
    assert {r["last_agent"] for r in shown["relationships"]} == {"ada-bot"}

    trail = as_json(db_path, "audit", "node", "Person", "name=alan turing", "--format", "json")
    restored = trail["entries"][-1]  # the unmerge's: done by the operator, the writer's value
    assert (restored["agent"], restored["written_by"]) == ("operator:root", "ada-bot")
    back = [r for r in trail["relationships"] if r["seq"] > restored["seq"]]
    assert len(back) == 4
    assert {(r["type"], r["agent"], r["written_by"]) for r in back} == {
        ("relationship.written", "operator:root", "ada-bot")
    }

    snapshot = tmp_path / "graph.jsonl"
    with Gate.open(db_path) as reopened:
        projector = JsonlProjector(snapshot, reopened.log)
        try:
            replay(reopened.log, projector)
        finally:
            projector.close()
    assert written_by(snapshot)["alan turing"] == "Written By: ada-bot"
