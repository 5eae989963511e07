"""Every answer of a scoped reader says what it withheld, on SQLite and on PostgreSQL:
graph_query, find_path and node_history as the neighbourhood reads do; a past read keeps
to each node's scope then rather than answering nothing; an unscoped answer says nothing
of withholding at all."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.gate.scoped import LABELS, WRITE, link, only, word, write
from writegate.gate import Gate, GateRejection
from writegate.language import node_identity


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


def ref(scope: str, n: int) -> dict[str, Any]:
    return {"label": LABELS[scope], "merge_keys": {"name": word(scope, n)}}


def as_json(answer: Any) -> str:
    return orjson.dumps(answer.model_dump(mode="json", by_alias=True)).decode()


@pytest.fixture
def star(scoped_gate: Gate) -> Gate:
    """aword1 linked to aword2, to two b nodes (one each way) and to a c node."""
    for n in (1, 2):
        write(scoped_gate, "a", n)
        write(scoped_gate, "b", n)
    write(scoped_gate, "c", 1)
    link(scoped_gate, ("a", 1), ("a", 2))
    link(scoped_gate, ("a", 1), ("b", 1))
    link(scoped_gate, ("b", 2), ("a", 1))
    link(scoped_gate, ("a", 1), ("c", 1))
    return scoped_gate


def test_graph_query_counts_what_leads_from_its_nodes_into_hidden_scopes(star: Gate) -> None:
    answer = star.reader(scopes=only("a")).graph_query("aword1")
    assert {t.target_entity for t in answer.triplets} == {
        node_identity("Alpha", {"name": "aword2"})
    }
    assert answer.withheld == {"b": 2, "c": 1}
    assert "bword" not in as_json(answer)
    assert star.reader(scopes=only("a", "b", "c")).graph_query("aword1").withheld == {}
    assert "withheld" not in as_json(star.reader().graph_query("aword1"))


def test_a_path_keeps_inside_the_grant_and_counts_what_its_nodes_lead_to(star: Gate) -> None:
    link(star, ("b", 1), ("a", 2))  # a shorter way round, through b
    reader = star.reader(scopes=only("a"))
    path = reader.find_path(ref("a", 2), ref("a", 1))
    assert path.found
    assert path.length == 1
    assert path.withheld == {"b": 3, "c": 1}
    lost = star.reader(scopes=only("b")).find_path(ref("b", 1), ref("b", 2))
    assert not lost.found  # the only way runs through a
    assert lost.withheld == {}
    with pytest.raises(GateRejection) as hidden:
        reader.find_path(ref("a", 1), ref("b", 1))
    assert hidden.value.code.value == "NODE_NOT_FOUND"
    assert "withheld" not in as_json(star.reader().find_path(ref("a", 2), ref("a", 1)))


def test_a_nodes_trail_leaves_out_the_writes_that_name_a_hidden_node(
    scoped_gate: Gate,
) -> None:
    write(scoped_gate, "b", 1)
    stubbed = scoped_gate.write_relationship(  # creates aword1 as a stub, in its trail
        type="LINK",
        from_label="Beta",
        from_keys={"name": "bword1"},
        to_label="Alpha",
        to_keys={"name": "aword1"},
        endpoint_policy="merge_endpoints",
        **WRITE,
    )
    assert stubbed.status == "written", stubbed
    write(scoped_gate, "a", 1)
    trail = scoped_gate.reader(scopes=only("a")).node_history(ref("a", 1))
    assert [e.type for e in trail.entries] == ["node.written"]
    assert trail.withheld == {"b": 1}
    whole = scoped_gate.reader().node_history(ref("a", 1))
    assert [e.type for e in whole.entries] == ["relationship.written", "node.written"]
    assert "withheld" not in as_json(whole)


def test_a_past_read_keeps_to_the_scopes_nodes_had_then(star: Gate) -> None:
    then = datetime.now(UTC)
    write(star, "a", 3)
    link(star, ("a", 1), ("a", 3))
    reader = star.reader(scopes=only("a"))
    opened = reader.open_nodes([ref("a", 1), ref("b", 1)], as_of=then)
    names = sorted(n.merge_keys["name"] for n in opened.nodes)
    assert names == ["aword1", "aword2"]
    assert opened.withheld == {"b": 2, "c": 1}
    assert "bword" not in as_json(opened)
    answer = reader.graph_query("aword1", as_of=then)
    assert [t.target_entity for t in answer.triplets] == [
        node_identity("Alpha", {"name": "aword2"})
    ]
    assert answer.withheld == {"b": 2, "c": 1}
    assert "bword" not in as_json(answer)
    valid = reader.graph_query("aword1", valid_at=then)
    assert valid.withheld == {"b": 2, "c": 1}
    assert reader.graph_query("aword1").withheld == {"b": 2, "c": 1}
    assert star.reader(scopes=only()).open_nodes([ref("a", 1)], as_of=then).nodes == []
