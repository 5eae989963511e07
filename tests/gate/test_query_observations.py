"""graph_query answers with the observations a question finds, on SQLite and PostgreSQL:
by their words, with what was said next to them in the same session, the nodes written
from them as seeds, and nothing recorded after ``as_of``."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from freezegun import freeze_time

from writegate.gate import Gate, ObservationResult
from writegate.gate.reads.query import DEFAULT
from writegate.language import node_identity

MELANIE = node_identity("Person", {"name": "Melanie"})
TURNS = [  # one conversation, said a minute apart; then another, unrelated
    ("s-1", "Melanie: I went to the animal shelter on Saturday."),
    ("s-1", "Caroline: Oh nice, what happened there?"),
    ("s-1", "Melanie: We came home with a puppy called Rex!"),
    ("s-1", "Caroline: I painted a sunrise over the lake last week."),
    ("s-2", "Caroline: The charity race raised money for the shelter roof."),
]


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db


@pytest.fixture
def said(gate: Gate) -> list[str]:
    ids = []
    for minute, (session, text) in enumerate(TURNS):
        with freeze_time(datetime(2030, 5, 1, 12, minute, tzinfo=UTC)):  # after the schema
            kept = gate.record_observation(
                text=text, source="chat", extraction_method="parsed", session=session,
                said_at=datetime(2024, 5, 1, 12, minute, tzinfo=UTC),
            )  # fmt: skip
        assert isinstance(kept, ObservationResult), kept
        ids.append(kept.observation_id)
    written = gate.write_node(
        label="Person",
        merge_keys={"name": "Melanie"},
        properties={},
        source="chat",
        extraction_method="llm",
        observations=[ids[2]],
    )
    assert written.status == "written", written
    return ids


def test_the_turn_next_to_the_one_whose_words_match_is_found_as_its_context(
    gate: Gate, said: list[str]
) -> None:
    found = gate.reader().graph_query("who did Melanie adopt from the shelter?").observations
    ids = [o.observation_id for o in found]
    shelter = ids.index(said[0])
    assert found[shelter].found_by == ["observation_text"]
    assert "shelter" in found[shelter].terms
    puppy = found[ids.index(said[2])]  # two places after the shelter, its word "Melanie"
    assert (puppy.text, puppy.session) == (TURNS[2][1], "s-1")
    between = found[ids.index(said[1])]  # no word of the question: found as context only
    assert (between.found_by, between.context_of, between.places) == ([], said[0], 1)
    scores = [o.score for o in found]
    assert scores == sorted(scores, reverse=True)


def test_context_stays_inside_its_session(gate: Gate, said: list[str]) -> None:
    found = gate.reader().graph_query("charity race").observations
    assert [o.observation_id for o in found] == [said[4]]  # alone in s-2: no neighbours


def test_a_node_written_from_a_found_observation_is_a_seed(gate: Gate, said: list[str]) -> None:
    answer = gate.reader().graph_query("puppy Rex")
    [seed] = [s for s in answer.seeds if s.entity == MELANIE]
    assert "observation_citing" in seed.found_by


def test_as_of_leaves_out_what_was_recorded_later(gate: Gate, said: list[str]) -> None:
    then = datetime(2030, 5, 1, 12, 1, 30, tzinfo=UTC)  # after the second turn was recorded
    found = gate.reader().graph_query("shelter puppy", as_of=then).observations
    assert {o.observation_id for o in found} <= set(said[:2])
    assert said[0] in {o.observation_id for o in found}


def test_a_meaning_ranking_that_disagrees_with_the_words_moves_nothing_they_found(
    gate: Gate, said: list[str]
) -> None:
    """Meaning weighs as far as it agrees with the words: an embedder that finds none of
    what the words found cannot reorder it, and what it alone found comes after."""
    unrelated = gate.record_observation(
        text="Bo: The ferry leaves at noon.",
        source="chat",
        extraction_method="parsed",
        session="s-9",
    )
    assert isinstance(unrelated, ObservationResult), unrelated
    question = "who did Melanie adopt from the shelter?"
    words = [o.observation_id for o in gate.reader().graph_query(question).observations]
    elsewhere = [i for i in [*said, unrelated.observation_id] if i not in words]
    assert elsewhere  # the test can fail: there is something for meaning to bring

    def nearest(text: str, k: int, kind: str) -> list[tuple[str, float]]:
        return [(i, 0.9) for i in elsewhere][:k] if kind == "observation" else []

    fused = gate.reader(nearest=nearest).graph_query(question).observations
    assert [o.observation_id for o in fused][: len(words)] == words


def _kept(gate: Gate, text: str, session: str, said_at: datetime | None = None) -> str:
    kept = gate.record_observation(
        text=text, source="chat", extraction_method="parsed", session=session, said_at=said_at
    )
    assert isinstance(kept, ObservationResult), kept
    return kept.observation_id


def _person(gate: Gate, name: str, cited: list[str]) -> None:
    written = gate.write_node(
        label="Person",
        merge_keys={"name": name},
        properties={},
        source="chat",
        extraction_method="llm",
        observations=cited,
    )
    assert written.status == "written", written


def test_the_people_a_question_names_pull_what_mentions_them_or_was_cited_for_them(
    gate: Gate,
) -> None:
    """Issue 39: a thing the graph holds and the question names pulls, across sessions, the
    observations that name it or that its writes cited, before one that only says the
    question's other words more often; one that connects every thing named comes first."""
    louder = _kept(gate, "Ben: the lake, the lake, what a lake, the lake at dawn", "s-1")
    cited = _kept(gate, "We had a picnic by the lake.", "s-2")  # says no name
    mentioned = _kept(gate, "Dana rowed across the lake", "s-3")
    _person(gate, "Caroline", [cited])
    _person(gate, "Dana", [])

    def answer(question: str) -> list[str]:
        return [o.observation_id for o in gate.reader().graph_query(question).observations]

    assert answer("what happened by the lake?")[0] == louder  # no one named: the words
    caroline = answer("what did Caroline do by the lake?")
    assert caroline.index(cited) < caroline.index(louder)
    dana = answer("what did Dana do by the lake?")
    assert dana.index(mentioned) < dana.index(louder)
    both = _kept(gate, "Caroline met Dana at the lake", "s-4")
    assert answer("when did Dana and Caroline go to the lake?")[0] == both


def test_what_meaning_alone_finds_ranks_after_everything_the_words_found(gate: Gate) -> None:
    """Issue 39: an embedder that agrees with the words about nearly all of the answer still
    cannot put what only it found above a hit of the words: it fills after them."""
    found = [_kept(gate, f"Ana: the shelter on day {n}", f"s-{n}") for n in range(12)]
    other = _kept(gate, "Bo: the ferry leaves at noon.", "s-99")
    deep = replace(DEFAULT, observations=25)
    words = [o.observation_id for o in gate.reader(deep).graph_query("shelter").observations]
    assert sorted(words) == sorted(found)  # the test can fail: twelve hits, then meaning's

    def nearest(text: str, k: int, kind: str) -> list[tuple[str, float]]:
        agreeing = [other, *words[:9]]  # nine of the words' first ten: agreement 0.9
        return [(i, 0.9) for i in agreeing][:k] if kind == "observation" else []

    fused = [o.observation_id for o in gate.reader(deep, nearest).graph_query("shelter").observations]
    assert fused[-1] == other
    assert set(fused[:12]) == set(found)


FIRST_QUERY = """
import sys
from writegate.gate import Gate
with Gate.open(sys.argv[1]) as gate:
    gate.publish_schema({"name": "s", "nodes": {"Person": {"merge_keys": ["name"]}}})
    gate.record_observation(text="Ana: the shelter", source="chat", extraction_method="parsed")
    gate.write_node(label="Person", merge_keys={"name": "Ana"}, properties={}, source="chat",
                    extraction_method="llm")
    answer = gate.reader().graph_query("Ana shelter")
    assert answer.observations and answer.seeds, answer
print("numpy" in sys.modules)
"""


def test_a_query_with_no_relationship_to_walk_does_not_import_numpy(tmp_path: Path) -> None:
    """Issue 39: a server's first graph_query over a memory of observations paid numpy's
    import (77 ms over stdio); with nothing to walk, the seeds' weights are the answer."""
    run = subprocess.run(
        [sys.executable, "-c", FIRST_QUERY, str(tmp_path / "log.db")],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert run.stdout.strip() == "False", run.stderr


def test_a_time_the_question_names_pulls_what_was_said_then(gate: Gate) -> None:
    """Issue 39: "in June" pulls what was said in a June (of any year: the question names
    none), "on 29 Dec 2023" what was said that day, before what only repeats the words."""
    def on(day: str) -> datetime:
        return datetime.fromisoformat(f"{day}T12:00:00+00:00")

    louder = _kept(gate, "Ana: camping, camping, the camping trip again", "s-1", on("2023-03-02"))
    june = _kept(gate, "Ana: back from camping at the lake", "s-2", on("2023-06-20"))
    december = _kept(gate, "Ana: pasta again tonight", "s-3", on("2023-12-29"))

    def first(question: str) -> str:
        return gate.reader().graph_query(question).observations[0].observation_id

    assert first("did Ana go camping?") == louder  # no time named: the words
    assert first("When did Ana go camping in June?") == june
    assert first("What did Ana cook when camping on 29 Dec 2023?") == december
    assert first("camping, may Ana go?") == louder  # the verb, not the month
