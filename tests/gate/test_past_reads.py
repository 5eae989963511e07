"""open_nodes at a past time over several nodes at once: their relationships then are read
from the log in one pass (``touching_many``), up to the cap, with the nodes at their ends."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from tests.conftest import person, relationship
from writegate.gate import Gate
from writegate.gate.reads.past import subgraph_then
from writegate.gate.reads.reader import GraphReader
from writegate.gate.reads.timeline import touching, touching_many
from writegate.gate.reads.views import Subgraph
from writegate.language import node_identity, relationship_identity

NAMES = ("Alice", "Bob", "Carol", "Dan")


def ident(name: str) -> str:
    return node_identity("Person", {"name": name})


def knows(a: str, b: str) -> dict[str, Any]:
    return relationship(from_keys={"name": a}, to_keys={"name": b})


def shape(graph: Subgraph) -> tuple[list[str], list[tuple[Any, ...]]]:
    nodes = sorted(str(n.merge_keys["name"]) for n in graph.nodes)
    edges = sorted(
        (e.from_node.merge_keys["name"], e.type, e.to_node.merge_keys["name"]) for e in graph.edges
    )
    return nodes, edges


def test_a_past_read_of_several_nodes_is_the_graph_as_it_was(gate: Gate) -> None:
    for name in NAMES[:3]:
        gate.write_node(**person(name))
    for a, b in (("Alice", "Bob"), ("Bob", "Carol")):
        gate.write_relationship(**knows(a, b))
    last = gate.write_relationship(**knows("Carol", "Dan"), endpoint_policy="merge_endpoints")
    assert last.status == "written"
    then = gate.log.read(after_seq=last.seq - 1, limit=1).events[0].occurred_at
    gate.delete_relationship(**knows("Bob", "Carol"))
    gate.write_relationship(**knows("Alice", "Carol"))
    asked = [ident(n) for n in ("Alice", "Bob", "Carol")]

    past = subgraph_then(gate.log, asked, as_of=then, valid_at=None, cap=100)
    assert shape(past) == (
        list(NAMES),
        [("Alice", "KNOWS", "Bob"), ("Bob", "KNOWS", "Carol"), ("Carol", "KNOWS", "Dan")],
    )
    assert not past.truncated

    now = subgraph_then(gate.log, asked, as_of=datetime.now(UTC), valid_at=None, cap=100)
    refs: list[Mapping[str, Any]] = [
        {"label": "Person", "merge_keys": {"name": n}} for n in ("Alice", "Bob", "Carol")
    ]
    assert shape(now) == shape(GraphReader(gate.log, gate.state).open_nodes(refs))

    capped = subgraph_then(gate.log, asked, as_of=then, valid_at=None, cap=2)
    assert capped.truncated
    assert len(capped.edges) == 2


def test_touching_many_is_touching_for_each_node(gate: Gate) -> None:
    for name in NAMES[:3]:
        gate.write_node(**person(name))
    gate.write_relationship(**knows("Alice", "Bob"))
    gate.write_node(**person("Erin"))  # first written after Alice's relationship
    gate.write_relationship(**knows("Carol", "Erin"))
    gate.write_relationship(**knows("Erin", "Erin"))
    asked = [ident(n) for n in ("Erin", "Alice", "Nobody", "Carol")]
    many = touching_many(gate.log, asked)
    assert many == {identity: touching(gate.log, identity) for identity in asked}
    assert many[ident("Erin")] == [
        relationship_identity("KNOWS", ident("Carol"), ident("Erin")),
        relationship_identity("KNOWS", ident("Erin"), ident("Erin")),
    ]
    assert many[ident("Nobody")] == []
