"""merge_nodes and unmerge_nodes (issue 12), on both backends: a merge folds a duplicate into
its survivor as events — relationships re-drawn, values taken by the conflict policy, the
duplicate's identity an alias — and an unmerge restores the graph exactly, values, edges
and who set each value included; verify stays green throughout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult, WriteRelationshipResult
from writegate.gate.audit.duplicates import audit_duplicates
from writegate.gate.merges.operations import MergeResult, UnmergeResult
from writegate.language import NodesMerged, payload_of
from writegate.projections.state import StateProjection

ALAN, DUP = {"name": "Alan Turing"}, {"name": "alan turing"}
STATE = StateProjection()


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=Actor(agent="a")) as g:
        document = yaml.safe_load((FIXTURES / "conflict_schema.yaml").read_text())
        assert g.publish_schema(document).status == "published"
        yield g


def node(gate: Gate, name: str, reliability: float = 0.5, **properties: Any) -> None:
    out = gate.write_node(
        label="Person",
        merge_keys={"name": name},
        properties=properties,
        source=f"src-{name}",
        extraction_method="api",
        reliability=reliability,
    )
    assert isinstance(out, WriteNodeResult), out


def edge(gate: Gate, rtype: str, start: str, end: str, **properties: Any) -> None:
    to_label = "Organization" if rtype == "WORKS_FOR" else "Person"
    out = gate.write_relationship(
        type=rtype,
        from_label="Person",
        from_keys={"name": start},
        to_label=to_label,
        to_keys={"name": end},
        properties=properties,
        source="edges.csv",
        extraction_method="api",
        endpoint_policy="merge_endpoints",
    )
    assert isinstance(out, WriteRelationshipResult), out


def merge(gate: Gate, survivor: dict[str, Any] = ALAN, duplicate: dict[str, Any] = DUP) -> Any:
    return gate.merge_nodes(
        label="Person",
        survivor_keys=survivor,
        duplicate_keys=duplicate,
        source="review",
        extraction_method="manual",
        reason="the same person",
    )


def unmerge(gate: Gate, merge_id: str) -> Any:
    return gate.unmerge_nodes(merge=merge_id, source="review", extraction_method="manual")


def graph(gate: Gate) -> dict[str, Any]:
    """Every node's and relationship's properties, and who set each value."""
    conn = gate.log.connection()
    snapshot = STATE.snapshot(conn)
    nodes = {row[0]: (row[1], yaml.safe_load(row[3])) for row in snapshot["nodes"]}
    edges = {row[0]: (row[1], row[2], row[3], yaml.safe_load(row[4]))
             for row in snapshot["relationships"]}  # fmt: skip
    facts = {
        identity: [(f.property, f.seq, f.agent, f.provenance) for f in STATE.fact_records(conn, identity)]
        for identity in [*nodes, *edges]
    }  # fmt: skip
    return {"nodes": nodes, "edges": edges, "facts": facts}


def build(gate: Gate) -> None:
    node(gate, "Alan Turing", role="mathematician", city="London", nicknames=["Alan"])
    node(gate, "alan turing", 0.9, role="codebreaker", city="Bletchley", nicknames=["Prof"])
    node(gate, "Bob")
    edge(gate, "KNOWS", "alan turing", "Bob", since=1940)  # the survivor has one too
    edge(gate, "KNOWS", "Alan Turing", "Bob", since=1939)
    edge(gate, "KNOWS", "Bob", "alan turing")
    edge(gate, "KNOWS", "alan turing", "Alan Turing")  # becomes a self-loop
    edge(gate, "WORKS_FOR", "alan turing", "GC&CS")


def test_merge_then_unmerge_restores_the_graph_exactly(gate: Gate) -> None:
    build(gate)
    before = graph(gate)
    merged = merge(gate)
    assert isinstance(merged, MergeResult), merged
    during = graph(gate)
    assert 'Person{"name":"alan turing"}' not in during["nodes"]
    _, alan = during["nodes"]['Person{"name":"Alan Turing"}']
    # city: supersede, the later-written value wins; role: keep_higher_confidence, the
    # duplicate's was written at a higher confidence; nicknames: many, united
    assert alan == {"name": "Alan Turing", "role": "codebreaker", "city": "Bletchley",
                    "nicknames": ["Alan", "Prof"]}  # fmt: skip
    assert merged.taken == ["city", "nicknames", "role"]
    # what the survivor's values gave way to is kept (a united list loses nothing)
    assert {s.property: s.value for s in merged.superseded} == {
        "city": "London", "role": "mathematician"
    }  # fmt: skip
    assert merged.relationships_moved == 4
    assert sorted(during["edges"]) == sorted([
        '(Person{"name":"Alan Turing"})-[KNOWS]->(Person{"name":"Bob"})',
        '(Person{"name":"Bob"})-[KNOWS]->(Person{"name":"Alan Turing"})',
        '(Person{"name":"Alan Turing"})-[KNOWS]->(Person{"name":"Alan Turing"})',
        '(Person{"name":"Alan Turing"})-[WORKS_FOR]->(Organization{"name":"GC&CS"})',
    ])  # fmt: skip
    # the survivor's own KNOWS Bob kept its since (a tie in confidence: the survivor's)
    knows = during["edges"]['(Person{"name":"Alan Turing"})-[KNOWS]->(Person{"name":"Bob"})']
    assert knows[3] == {"since": 1939}
    # a value keeps its writer through the merge, not the merger
    facts = {p: (seq, agent, prov["source"])
                 for p, seq, agent, prov in during["facts"]['Person{"name":"Alan Turing"}']}  # fmt: skip
    assert facts["role"][2] == "src-alan turing"
    assert gate.verify().ok

    undone = unmerge(gate, merged.merge)
    assert isinstance(undone, UnmergeResult), undone
    assert (undone.restored, undone.kept) == ('Person{"name":"alan turing"}', [])
    assert graph(gate) == before
    assert gate.verify().ok  # the state equals a replay of the log: a rebuild reproduces it


def test_a_merge_under_reject_is_refused_and_appends_nothing(gate: Gate) -> None:
    node(gate, "Alan Turing", email="alan@example.org")
    node(gate, "alan turing", email="turing@example.org")
    head = gate.log.head()
    out = merge(gate)
    assert isinstance(out, Rejected)
    assert out.error_code == "CONFLICT"
    assert out.details["conflicts"] == [
        {"property": "email", "survivor": "alan@example.org", "duplicate": "turing@example.org"}
    ]
    assert gate.log.head() == head


def test_a_second_functional_relationship_refuses_the_merge(gate: Gate) -> None:
    edge(gate, "WORKS_FOR", "Alan Turing", "Cambridge")
    edge(gate, "WORKS_FOR", "alan turing", "GC&CS")
    out = merge(gate)
    assert isinstance(out, Rejected)
    assert out.error_code == "CONFLICT"
    assert out.details["type"] == "WORKS_FOR"
    assert out.details["held"] == [
        '(Person{"name":"Alan Turing"})-[WORKS_FOR]->(Organization{"name":"Cambridge"})'
    ]


def test_writes_naming_the_duplicate_land_on_the_survivor(gate: Gate) -> None:
    build(gate)
    merged = merge(gate)
    assert isinstance(merged, MergeResult)
    out = gate.write_node(label="Person", merge_keys=DUP, properties={"phone": "123"},
                          source="later", extraction_method="api")  # fmt: skip
    assert isinstance(out, WriteNodeResult)
    last = payload_of(list(gate.log.iter_events())[-1])
    assert (last.subject, getattr(last, "resolved_from", None)) == (
        'Person{"name":"Alan Turing"}', 'Person{"name":"alan turing"}'
    )  # fmt: skip
    edge(gate, "KNOWS", "alan turing", "Carol")
    assert STATE.relationship_exists(
        gate.log.connection(), '(Person{"name":"Alan Turing"})-[KNOWS]->(Person{"name":"Carol"})'
    )
    gone = gate.delete_node(label="Person", merge_keys=DUP, source="s", extraction_method="api")
    assert isinstance(gone, Rejected)
    assert gone.error_code == "NODE_NOT_FOUND"
    assert gone.details["merged_into"] == 'Person{"name":"Alan Turing"}'
    assert gone.details["merge"] == merged.merge


def test_a_relationship_naming_the_duplicate_says_its_end_landed_on_the_survivor(
    gate: Gate,
) -> None:
    build(gate)
    assert isinstance(merge(gate), MergeResult)
    out = gate.write_relationship(type="KNOWS", from_label="Person", from_keys={"name": "Bob"},
                                  to_label="Person", to_keys=DUP, source="later",
                                  extraction_method="api")  # fmt: skip
    assert isinstance(out, WriteRelationshipResult), out
    assert out.to_node.merge_keys == ALAN
    assert out.resolved_from == {"to": 'Person{"name":"alan turing"}'}  # as write_node says
    written = payload_of(list(gate.log.iter_events())[-1])
    assert getattr(written, "resolved_from", None) == out.resolved_from


def test_an_unmerge_keeps_what_changed_since(gate: Gate) -> None:
    build(gate)
    merged = merge(gate)
    assert isinstance(merged, MergeResult)
    node(gate, "Alan Turing", 0.95, city="Manchester")  # written after the merge
    out = gate.delete_relationship(
        type="WORKS_FOR", from_label="Person", from_keys=ALAN, to_label="Organization",
        to_keys={"name": "GC&CS"}, source="s", extraction_method="api",
    )  # fmt: skip
    assert out.status == "deleted"
    undone = unmerge(gate, merged.merge)
    assert isinstance(undone, UnmergeResult), undone
    assert undone.kept == [
        "city", '(Person{"name":"alan turing"})-[WORKS_FOR]->(Organization{"name":"GC&CS"})'
    ]  # fmt: skip
    now = graph(gate)
    assert now["nodes"]['Person{"name":"Alan Turing"}'][1]["city"] == "Manchester"
    assert now["nodes"]['Person{"name":"Alan Turing"}'][1]["role"] == "mathematician"
    assert now["nodes"]['Person{"name":"alan turing"}'][1]["city"] == "Bletchley"
    assert not any("WORKS_FOR" in identity for identity in now["edges"])
    assert gate.verify().ok


def test_a_merge_is_undone_once(gate: Gate) -> None:
    build(gate)
    merged = merge(gate)
    assert isinstance(unmerge(gate, merged.merge), UnmergeResult)
    again = unmerge(gate, merged.merge)
    assert isinstance(again, Rejected)
    assert again.error_code == "MERGE_NOT_FOUND"
    assert again.details == {"merge": merged.merge, "undone": True}
    unknown = unmerge(gate, "0" * 32)
    assert isinstance(unknown, Rejected)
    assert unknown.details["undone"] is False


def test_merges_chain_and_unwind_in_order(gate: Gate) -> None:
    build(gate)
    node(gate, "A. M. Turing", field="logic")
    before = graph(gate)
    first = merge(gate)  # alan turing -> Alan Turing
    second = merge(gate, {"name": "A. M. Turing"}, ALAN)  # Alan Turing -> A. M. Turing
    assert isinstance(first, MergeResult)
    assert isinstance(second, MergeResult)
    # the first duplicate's alias follows its survivor into the second merge
    node(gate, "alan turing", note="via the alias")
    assert graph(gate)["nodes"]['Person{"name":"A. M. Turing"}'][1]["note"] == "via the alias"
    stuck = unmerge(gate, first.merge)
    assert isinstance(stuck, Rejected)
    assert stuck.error_code == "MERGE_NOT_UNDOABLE"
    gate.write_node(label="Person", merge_keys={"name": "A. M. Turing"},
                    properties={"note": None}, source="s", extraction_method="api")  # fmt: skip
    assert isinstance(unmerge(gate, second.merge), UnmergeResult)
    assert isinstance(unmerge(gate, first.merge), UnmergeResult)
    assert graph(gate)["nodes"] == before["nodes"]
    assert graph(gate)["edges"] == before["edges"]
    assert gate.verify().ok


def test_a_retried_merge_is_answered_from_the_log(gate: Gate) -> None:
    build(gate)
    args: dict[str, Any] = {"label": "Person", "survivor_keys": ALAN, "duplicate_keys": DUP,
                                "source": "review", "extraction_method": "manual",
                                "idempotency_key": "merge-1"}  # fmt: skip
    first = gate.merge_nodes(**args)
    head = gate.log.head()
    assert gate.merge_nodes(**args) == first
    assert gate.log.head() == head
    merges = [e for e in gate.log.iter_events() if isinstance(payload_of(e), NodesMerged)]
    assert len(merges) == 1


def test_the_audit_lists_merges_and_their_undoing(gate: Gate) -> None:
    build(gate)
    merged = merge(gate)
    assert isinstance(merged, MergeResult)
    assert isinstance(unmerge(gate, merged.merge), UnmergeResult)
    found = audit_duplicates(gate.log)
    assert (found.merged, found.unmerged) == (1, 1)
    done, undone = found.entries
    assert (done.outcome, done.merge, done.message) == ("merged", merged.merge, "the same person")
    assert (done.written_as, done.landed_on) == (merged.merged, merged.survivor)
    assert (undone.outcome, undone.agent) == ("unmerged", "a")
