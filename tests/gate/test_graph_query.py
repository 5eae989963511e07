"""graph_query through the Python API, on SQLite and PostgreSQL: a small graph whose
ranking can be argued, depth, the relationship filter, the bounds, the past, superseded
facts, and provenance that leads to the event."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from freezegun import freeze_time

from tests.conftest import ROOT
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.errors import GateRejection
from writegate.gate.feedback import EdgeKey
from writegate.gate.reads.answers import QueryResult
from writegate.gate.reads.query import RECIPES, QueryConfig
from writegate.language import node_identity

SCHEMA = ROOT / "fixtures" / "conflict_schema.yaml"
BEFORE, T1, T2, T3 = (datetime(2025, month, 1, tzinfo=UTC) for month in (1, 3, 5, 7))


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Both backends."""
    return any_db


def who(name: str) -> str:
    return node_identity("Person", {"name": name})


def person(gate: Gate, name: str, role: str, label: str = "Person") -> None:
    written = gate.write_node(
        label=label,
        merge_keys={"name": name},
        properties={"role": role},
        source="notes",
        extraction_method="manual",
        reliability=0.9,
    )
    assert written.status == "written", written


def link(gate: Gate, a: str, b: str, rtype: str = "KNOWS", to_label: str = "Person") -> int:
    written = gate.write_relationship(
        type=rtype,
        from_label="Person",
        from_keys={"name": a},
        to_label=to_label,
        to_keys={"name": b},
        source="chat",
        extraction_method="llm",
        reliability=0.8,
    )
    assert written.status == "written", written
    return written.seq


@pytest.fixture
def gate(db_path: str | Path) -> Iterator[Gate]:
    """Ada knows Charles and Mary; Charles knows John, who knows Grace; Hedy knows nobody.
    Written at T1; at T2 Ada starts at Initech, at T3 she moves to Globex (WORKS_FOR is
    functional: the move supersedes Initech)."""
    with Gate.open(db_path, default_actor=Actor(agent="historian", session="s-1")) as g:
        with freeze_time(BEFORE):
            g.publish_schema(SCHEMA)
        with freeze_time(T1):
            for name, role in [
                ("Ada", "mathematician"),
                ("Charles", "inventor"),
                ("Mary", "scientist"),
                ("John", "astronomer"),
                ("Grace", "admiral"),
                ("Hedy", "actress"),
            ]:
                person(g, name, role)
            person(g, "Initech", "software", "Organization")
            person(g, "Globex", "energy", "Organization")
            for a, b in [
                ("Ada", "Charles"),
                ("Ada", "Mary"),
                ("Charles", "John"),
                ("John", "Grace"),
            ]:
                link(g, a, b)
        with freeze_time(T2):
            link(g, "Ada", "Initech", "WORKS_FOR", "Organization")
        with freeze_time(T3):
            link(g, "Ada", "Globex", "WORKS_FOR", "Organization")
        yield g


def pairs(result: QueryResult) -> list[tuple[str, str, str]]:
    return [(t.source_entity, t.relationship, t.target_entity) for t in result.triplets]


@pytest.mark.parametrize("recipe", ["ppr", "bfs"])
def test_the_relationship_between_two_named_people_ranks_first(gate: Gate, recipe: str) -> None:
    found = gate.reader(RECIPES[recipe]).graph_query("Ada Charles", depth=2)
    ranked = pairs(found)
    assert ranked[0] == (who("Ada"), "KNOWS", who("Charles"))
    one_hop = {(who("Ada"), "KNOWS", who("Mary")), (who("Charles"), "KNOWS", who("John"))}
    assert set(ranked[1:4]) >= one_hop  # each touches one named person
    two_hops = ranked.index((who("John"), "KNOWS", who("Grace")))
    assert all(ranked.index(t) < two_hops for t in one_hop)
    assert found.triplets[two_hops].why.hops == 2
    assert found.triplets[two_hops].why.seed == who("Charles")
    assert found.triplets[0].why.terms == ["ada", "charles"]
    assert [s.entity for s in found.seeds][:2] == [who("Ada"), who("Charles")]
    scores = [t.relevance_score for t in found.triplets]
    assert scores == sorted(scores, reverse=True)


def test_a_question_about_an_isolated_node_still_answers(gate: Gate) -> None:
    found = gate.reader().graph_query("Hedy")
    assert found.triplets == []
    assert [(s.entity, s.terms, s.found_by) for s in found.seeds] == [
        (who("Hedy"), ["hedy"], ["node_text"])
    ]
    assert found.seeds[0].node.merge_keys == {"name": "Hedy"}


def test_depth_bounds_the_hops(gate: Gate) -> None:
    reader = gate.reader()
    near = pairs(reader.graph_query("Grace", depth=1))
    assert near == [(who("John"), "KNOWS", who("Grace"))]
    far = reader.graph_query("Grace", depth=3)
    assert (who("Ada"), "KNOWS", who("Charles")) in pairs(far)
    assert max(t.why.hops for t in far.triplets) == 3


def test_a_relationship_filter_follows_only_that_type(gate: Gate) -> None:
    found = gate.reader().graph_query("Ada", relationship_type="WORKS_FOR")
    assert pairs(found) == [
        (who("Ada"), "WORKS_FOR", node_identity("Organization", {"name": "Globex"}))
    ]


def test_a_relationship_named_by_the_question_seeds_its_ends(gate: Gate) -> None:
    found = gate.reader().graph_query("works")
    assert {s.entity for s in found.seeds} == {
        who("Ada"),
        node_identity("Organization", {"name": "Globex"}),
    }
    assert all(s.found_by == ["relationship_text"] for s in found.seeds)
    assert pairs(found)[0][1] == "WORKS_FOR"


def test_bounds_cut_the_answer_and_say_so(gate: Gate) -> None:
    for friend in range(30):
        person(gate, f"Friend {friend}", "pal")
        link(gate, "Mary", f"Friend {friend}")
    tight = QueryConfig(neighbours=5, max_triplets=4, top_k=1)
    found = gate.reader(tight).graph_query("Mary", depth=1)
    assert len(found.triplets) == 4
    assert found.truncated
    assert len(found.seeds) == 1
    loose = gate.reader().graph_query("Mary", depth=1, top_k=1)
    assert len(loose.triplets) == 16
    assert loose.truncated


def test_bad_arguments_are_invalid_arguments(gate: Gate) -> None:
    reader = gate.reader()
    for kwargs in ({"query": "  "}, {"query": "Ada", "top_k": 0}, {"query": "Ada", "depth": 9}):
        with pytest.raises(GateRejection) as refused:
            reader.graph_query(**kwargs)
        assert refused.value.code == "INVALID_ARGUMENT"
    with pytest.raises(GateRejection) as refused:
        reader.graph_query("Ada", relationship_type="no such")
    assert refused.value.code == "INVALID_IDENTIFIER"


def test_a_superseded_fact_is_not_returned_now(gate: Gate) -> None:
    found = pairs(gate.reader().graph_query("Ada"))
    employers = [t for t in found if t[1] == "WORKS_FOR"]  # Globex's replaced Initech
    globex = node_identity("Organization", {"name": "Globex"})
    assert employers == [(who("Ada"), "WORKS_FOR", globex)]
    initech = gate.reader().graph_query("Initech")
    assert [s.entity for s in initech.seeds] == [node_identity("Organization", {"name": "Initech"})]
    assert initech.triplets == []  # the company is still there, Ada's job there is not


def test_as_of_excludes_what_was_written_later(gate: Gate) -> None:
    reader = gate.reader()
    before = pairs(reader.graph_query("Ada", as_of=datetime(2025, 6, 1, tzinfo=UTC)))
    initech = (who("Ada"), "WORKS_FOR", node_identity("Organization", {"name": "Initech"}))
    assert initech not in pairs(reader.graph_query("Ada"))
    assert (who("Ada"), "KNOWS", who("Charles")) in before
    assert initech in before
    assert all(t[1] != "WORKS_FOR" or t == initech for t in before)
    earliest = reader.graph_query("Ada", as_of=datetime(2025, 2, 1, tzinfo=UTC))
    assert earliest.seeds == []
    assert earliest.triplets == []
    valid = pairs(reader.graph_query("Ada", valid_at=datetime(2025, 6, 1, tzinfo=UTC)))
    assert initech in valid  # true then, as known now


def test_provenance_leads_to_the_event(gate: Gate) -> None:
    found = gate.reader().graph_query("Ada Charles")
    first = found.triplets[0].provenance
    event = gate.log.read(after_seq=first.seq - 1, limit=1).events[0]
    assert first.event_id == event.event_id
    assert (first.agent, first.session, first.source, first.method) == (
        "historian",
        "s-1",
        "chat",
        "llm",
    )
    assert first.recorded_at.startswith("2025-03-01")
    assert first.observation_ids == []
    assert found.observations == []
    assert found.triplets[0].why.similarity is None
    assert found.triplets[0].why.feedback_weight == 0.5  # no feedback yet: the start
    assert who("Ada") in event.streams or any(s.startswith("rel:") for s in event.streams)


def test_feedback_reorders_the_answer_but_never_buries_a_fact(gate: Gate) -> None:
    reader = gate.reader()
    before = reader.graph_query("Ada", depth=1, relationship_type="KNOWS")
    first, second = before.triplets[0], before.triplets[1]
    assert first.why.feedback_weight == second.why.feedback_weight == 0.5
    key = EdgeKey.model_validate(
        {
            "sourceId": first.source_entity,
            "targetId": first.target_entity,
            "relationshipName": first.relationship,
        }
    )
    for session in ("s-1", "s-2", "s-3"):  # 0.5 -> 0.35 -> 0.245 -> 0.1715 at alpha 0.3
        done = gate.graph_improve(session_id=session, outcome="rejected", used_edge_keys=[key])
        assert done.status == "applied", done
    after = reader.graph_query("Ada", depth=1, relationship_type="KNOWS")
    assert pairs(after)[0] == pairs(before)[1]
    demoted = after.triplets[pairs(after).index(pairs(before)[0])]
    assert demoted.why.feedback_weight == pytest.approx(0.1715)
    # relevance times floor + (1 - floor) * weight, floor 0.5: never below half of it
    unweighed = first.relevance_score / (0.5 + 0.5 * 0.5)
    assert demoted.relevance_score == pytest.approx(unweighed * (0.5 + 0.5 * 0.1715))
