"""A retraction in the graph store (issue 43): the facts it took back deleted, the one
reverted holding its old value again, the one kept its other support alone — and its undoing
puts back exactly the graph there was; a replay from the start makes the same graph."""

from __future__ import annotations

from typing import Any

from tests.conftest import relationship
from tests.projections.conftest import wipe
from tests.retracted import said, world
from writegate.gate import Gate
from writegate.gate.retraction import RetractResult
from writegate.projections.graph import BoltTarget, GraphProjector
from writegate.projections.runner import replay


def _graph(target: BoltTarget) -> dict[str, Any]:
    """Every node by name with its properties, and every relationship, as the store holds them."""
    with target.driver() as driver, driver.session(database=target.database) as session:
        nodes = {
            record["name"]: dict(record["props"])
            for record in session.run(
                "MATCH (n:Person) RETURN n.name AS name, properties(n) AS props"
            )
        }
        edges = sorted(
            (record["a"], record["t"], record["b"], tuple(sorted(dict(record["props"]).items())))
            for record in session.run(
                "MATCH (a)-[x]->(b) RETURN a.name AS a, type(x) AS t, b.name AS b, "
                "properties(x) AS props"
            )
        )
    for props in nodes.values():
        props.pop("last_updated", None)  # a driver's DateTime: compared by the rest
    return {"nodes": nodes, "edges": edges}


def test_the_graph_follows_a_retraction_and_its_undoing(gate: Gate, arcadedb: BoltTarget) -> None:
    world(gate)
    knows = relationship(from_keys={"name": "Ann"}, to_keys={"name": "Bob"}, source="S")
    assert gate.write_relationship(**knows).status == "written"
    wipe(arcadedb)
    projector = GraphProjector(arcadedb, log=gate.log)
    try:
        replay(gate.log, projector)
        before = _graph(arcadedb)
        assert [edge[:3] for edge in before["edges"]] == [("Ann", "KNOWS", "Bob")]
        done = gate.retract(source="S", reason="hoax")
        assert isinstance(done, RetractResult)
        replay(gate.log, projector)
        after = _graph(arcadedb)
        assert "Ann" not in after["nodes"]
        assert "Cleo" not in after["nodes"]
        assert after["edges"] == []
        assert after["nodes"]["Bob"]["age"] == 20  # back to T's version
        assert after["nodes"]["Bob"]["source"] == "T"
        eve = after["nodes"]["Eve"]
        assert eve["_supported_by"] == ["T"]  # T alone holds it, at the read model's confidence
        held = said(gate, "Eve")
        assert held is not None
        assert round(eve["_corroborated_confidence"], 6) == held["confidence"]
        assert after["nodes"]["Eve"]["age"] == 50
        wipe(arcadedb)  # its checkpoint too: a replay from the start
        again = GraphProjector(arcadedb, log=gate.log)
        try:
            replay(gate.log, again)
        finally:
            again.close()
        assert _graph(arcadedb) == after
        assert gate.unretract(done.retraction or "").status == "ok"
        replay(gate.log, projector)
        assert _graph(arcadedb) == before
    finally:
        projector.close()
