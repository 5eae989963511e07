"""Scoped reads, on SQLite and on PostgreSQL: a node's scope comes from its label, the
read model and the text index keep it, and a caller granted some scopes never meets a node,
relationship, label, word or observation of another — in a search, a lookup, a walk, a
query, a path or a trail — only how many relationships lead there, counted exactly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.gate.scoped import LABELS, SCOPES, WRITE, link, word, write
from writegate.gate import Gate, GateRejection, ObservationResult
from writegate.gate.reads.answers import QueryResult
from writegate.gate.reads.observations import ObservationPage, ObservationView
from writegate.gate.reads.views import NodeHistory
from writegate.gate.scopes import Scopes
from writegate.language import node_identity


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


def test_a_node_is_in_its_labels_scope_and_its_relationships_in_both_ends(
    scoped_gate: Gate,
) -> None:
    write(scoped_gate, "a", 1)
    write(scoped_gate, "b", 1)
    link(scoped_gate, ("a", 1), ("b", 1))
    written = list(scoped_gate.log.read(after_seq=0, limit=10).events)
    node = next(e for e in written if e.type == "node.written")
    assert node.payload["scope"] == "a"
    conn = scoped_gate.log.connection()
    documents = {d.identity: d for d in scoped_gate.state.text_index(conn).documents(conn)}
    rel = next(d for d in documents.values() if d.kind == "relationship")
    assert (rel.scope_from, rel.scope_to) == ("a", "b")
    assert scoped_gate.state.equals_replay(scoped_gate.log, conn)


def test_a_log_without_scopes_writes_events_as_before(gate: Gate) -> None:
    gate.write_node(label="Person", merge_keys={"name": "Ann"}, properties={}, **WRITE)
    event = gate.log.read(after_seq=0, limit=10).events[-1]
    assert "scope" not in event.payload
    page = gate.reader(scopes=Scopes(granted=frozenset({"default"}))).search_nodes("ann")
    assert [n.merge_keys["name"] for n in page.nodes] == ["Ann"]


def test_a_caller_granted_no_scope_sees_nothing(scoped_gate: Gate) -> None:
    write(scoped_gate, "a", 1)
    reader = scoped_gate.reader(scopes=Scopes(granted=frozenset()))
    assert reader.search_nodes("aword1").nodes == []
    assert reader.graph_query("aword1").triplets == []


def test_an_answer_counts_the_relationships_into_hidden_scopes(scoped_gate: Gate) -> None:
    for n in (1, 2):
        write(scoped_gate, "a", n)
        write(scoped_gate, "b", n)
    write(scoped_gate, "c", 1)
    link(scoped_gate, ("a", 1), ("a", 2))
    link(scoped_gate, ("a", 1), ("b", 1))
    link(scoped_gate, ("b", 2), ("a", 1))
    link(scoped_gate, ("a", 1), ("c", 1))
    reader = scoped_gate.reader(scopes=Scopes(granted=frozenset({"a"})))
    page = reader.open_nodes([{"label": "Alpha", "merge_keys": {"name": "aword1"}}])
    assert sorted(n.merge_keys["name"] for n in page.nodes) == ["aword1", "aword2"]
    assert len(page.edges) == 1
    assert page.withheld == {"b": 2, "c": 1}
    assert "bword" not in page.model_dump_json()


GRAPHS = st.tuples(
    st.lists(st.sampled_from(SCOPES), min_size=1, max_size=8),  # each node's scope
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=12),  # links
    st.sets(st.sampled_from(SCOPES), max_size=3),  # the grant
    st.integers(0, 7),  # the node asked about
)


class Model:
    """Everything written so far (examples share one log), to count by brute force."""

    def __init__(self) -> None:
        self.scope: dict[str, str] = {}  # identity -> scope
        self.links: set[tuple[str, str]] = set()

    def withheld(self, shown: set[str], grant: set[str], rtype: None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for start, end in self.links:
            for here, there in ((start, end), (end, start)):
                if here in shown and self.scope[there] not in grant:
                    counts[self.scope[there]] = counts.get(self.scope[there], 0) + 1
        return dict(sorted(counts.items()))

    def more(self, found: Any, grant: set[str]) -> dict[str, int]:
        """Each search match's visible relationships that the answer does not show."""
        edges = {
            tuple(node_identity(e.label, e.merge_keys) for e in (edge.from_node, edge.to_node))
            for edge in found.edges
        }
        return {
            match: sum(
                match in link and link not in edges
                for link in self.links
                if all(self.scope[end] in grant for end in link)
            )
            for n in found.nodes
            if n.more_relationships is not None
            for match in [node_identity(n.label, n.merge_keys)]
        }


def shown_by(found: Any) -> set[str]:
    """The nodes an answer names, whose relationships its withheld counts."""
    if isinstance(found, QueryResult):
        ends = {e for t in found.triplets for e in (t.source_entity, t.target_entity)}
        return {s.entity for s in found.seeds} | ends
    if isinstance(found, NodeHistory):
        return {node_identity(found.node.label, found.node.merge_keys)}
    return {node_identity(n.label, n.merge_keys) for n in found.nodes}


def keep_said(gate: Gate, scope: str, n: int, salt: int) -> str:
    kept = gate.record_observation(
        text=f"{word(scope, n)} heard", source="test", extraction_method="manual",
        scope=scope, session=f"s{salt}",
    )  # fmt: skip
    assert isinstance(kept, ObservationResult), kept
    return kept.observation_id


def hidden_or_answered(visible: bool, read: Callable[[], Any], code: str) -> list[Any]:
    """The answer of a read about something visible; a hidden one is not found."""
    if visible:
        return [read()]
    with pytest.raises(GateRejection) as refused:
        read()
    assert refused.value.code.value == code
    return []


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(graph=GRAPHS, salt=st.integers(0, 10**9))
def test_a_scoped_caller_never_meets_another_scope(
    scoped_gate: Gate, graph: tuple[Any, ...], salt: int
) -> None:
    scopes, links, grant, asked = graph
    model = _MODELS.setdefault(id(scoped_gate), Model())
    nodes = [(scope, salt * 10 + i) for i, scope in enumerate(scopes)]
    said: dict[tuple[str, int], str] = {}
    for scope, n in nodes:
        said[scope, n] = keep_said(scoped_gate, scope, n, salt)
        write(scoped_gate, scope, n, observations=[said[scope, n]])
        model.scope[node_identity(LABELS[scope], {"name": word(scope, n)})] = scope
    for i, j in links:
        if i < len(nodes) and j < len(nodes):
            link(scoped_gate, nodes[i], nodes[j])
            model.links.add(
                tuple(  # type: ignore[arg-type]
                    node_identity(LABELS[s], {"name": word(s, n)}) for s, n in (nodes[i], nodes[j])
                )
            )
    target, other = nodes[asked % len(nodes)], nodes[(asked + 1) % len(nodes)]
    ref, other_ref = (
        {"label": LABELS[s], "merge_keys": {"name": word(s, n)}} for s, n in (target, other)
    )
    reader = scoped_gate.reader(scopes=Scopes(granted=frozenset(grant)))
    observations = scoped_gate.observation_reader(scopes=Scopes(granted=frozenset(grant)))
    hidden = [s for s in SCOPES if s not in grant]
    every_word = f"{word(*target)} {' '.join(word(s, salt) for s in SCOPES)}"
    matched = [reader.search_nodes(every_word), reader.search_nodes(every_word, neighbors=1)]
    for page in matched:  # each match counts the relationships it leaves out, in the grant
        told = {node_identity(n.label, n.merge_keys): n.more_relationships for n in page.nodes}
        assert all(v is not None for v in list(told.values())[:1])  # the first is a match
        assert {k: v for k, v in told.items() if v is not None} == model.more(page, grant)
    answers: list[Any] = [
        *matched,
        reader.open_nodes([ref]),
        reader.graph_query(word(*target), depth=2),
        reader.graph_query(every_word, depth=3),
        observations.search_observations(f"{every_word} heard"),
    ]
    seen = target[0] in grant
    answers += hidden_or_answered(seen, lambda: reader.neighbors(ref, depth=2), "NODE_NOT_FOUND")
    answers += hidden_or_answered(seen, lambda: reader.node_history(ref), "NODE_NOT_FOUND")
    answers += hidden_or_answered(
        seen and other[0] in grant, lambda: reader.find_path(ref, other_ref), "NODE_NOT_FOUND"
    )
    answers += hidden_or_answered(
        seen, lambda: observations.open_observation(said[target]), "OBSERVATION_NOT_FOUND"
    )
    for found in answers:
        text = orjson.dumps(found.model_dump(mode="json", by_alias=True)).decode()
        for scope in hidden:
            assert f"{scope}word" not in text
            assert LABELS[scope] not in text
        withheld = getattr(found, "withheld", None)
        if withheld is not None:
            assert withheld == model.withheld(shown_by(found), grant)
        elif not isinstance(found, ObservationPage | ObservationView):
            raise AssertionError(f"{type(found).__name__} says nothing of what it withheld")


_MODELS: dict[int, Model] = {}


def test_the_text_index_probe_keeps_to_the_scopes_given(scoped_gate: Gate) -> None:
    write(scoped_gate, "a", 1)
    write(scoped_gate, "b", 1)
    link(scoped_gate, ("a", 1), ("b", 1))
    conn = scoped_gate.log.connection()
    index = scoped_gate.state.text_index(conn)

    def hits(kind: str, visible: frozenset[str] | None) -> list[str]:
        return [
            h.identity for h in index.search(conn, "aword1 bword1 LINK", kind, 10, None, visible)
        ]

    assert hits("node", frozenset({"a"})) == [node_identity("Alpha", {"name": "aword1"})]
    assert len(hits("node", None)) == 2
    assert hits("relationship", frozenset({"a"})) == []
    assert len(hits("relationship", frozenset({"a", "b"}))) == 1
    assert hits("node", frozenset()) == []
