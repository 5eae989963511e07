"""The retrieval bench counts what it says it counts: LoCoMo's file read as its authors laid it
out, recall and MRR per question, and each system answering with turns, best first (on a
small conversation made here; the real data is never needed by the tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.bench_recall import Scores
from bench.recall_data import Conversation, Question, Turn, load, locate, one_memory
from bench.recall_systems import (
    lexical_baseline,
    plain_bm25,
    search_nodes,
    search_nodes_in_context,
    turn_hits,
    written,
)


def _turn(dia_id: str, speaker: str, text: str, **more: str) -> dict[str, str]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **more}


SAMPLE = {
    "sample_id": "conv-1",
    "conversation": {
        "speaker_a": "Ada",
        "speaker_b": "Bo",
        "session_10_date_time": "1:00 pm on 9 May, 2023",
        "session_10": [_turn("D10:1", "Bo", "See you soon")],
        "session_2": [
            _turn("D2:1", "Ada", "I adopted a puppy named Biscuit"),
            _turn("D2:2", "Bo", "Look!", blip_caption="a photo of a lighthouse"),
        ],
    },
    "qa": [
        {
            "question": "What did Ada adopt?",
            "answer": "a puppy",
            "evidence": ["D2:1"],
            "category": 1,
        },
        {"question": "What did they see?", "evidence": ["D2:2; D10:1", "D9:9"], "category": 4},
        {"question": "Who knows?", "adversarial_answer": "no one", "evidence": [], "category": 5},
        {"question": "Where?", "evidence": ["D7:1"], "category": 5},
    ],
}


def test_locomo_is_read_in_session_order_with_each_questions_turns(tmp_path: Path) -> None:
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([SAMPLE]))
    (conversation,) = load(path)
    assert conversation.speakers == ("Ada", "Bo")
    assert [(t.dia_id, t.session, t.position) for t in conversation.turns] == [
        ("D2:1", 2, 0),
        ("D2:2", 2, 1),
        ("D10:1", 10, 0),
    ]
    assert conversation.turns[1].text == "Look! [image: a photo of a lighthouse]"
    assert [q.evidence for q in conversation.questions] == [("D2:1",), ("D2:2", "D10:1")]
    assert conversation.unanswerable == 2


def test_a_file_that_is_not_the_one_measured_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([SAMPLE]))
    with pytest.raises(ValueError, match="not LoCoMo's locomo10"):
        locate(path)


def test_recall_any_and_mrr_are_counted_per_question() -> None:
    scores = Scores()
    question = Question("?", 1, ("a", "b"))
    scores.add(question, ["x", "a", "y", "z", "w", "b"], 0.001)  # a at 2, b at 6
    scores.add(Question("?", 1, ("c",)), ["x"], 0.003)  # not found
    assert scores.row() == ["0.000", "0.250", "0.500", "0.500", "0.500", "0.250", "2.00"]


CONVERSATION = Conversation(
    "conv-9",
    ("Ada", "Bo"),
    tuple(
        Turn(f"D1:{i + 1}", ("Ada", "Bo")[i % 2], text, 1, i)
        for i, text in enumerate(
            [
                "Morning! How was the weekend?",
                "I went sailing on the lake with my sister",
                "Sounds lovely, was it windy?",
                "Very windy, we nearly capsized",
                "Glad you are fine. I painted all weekend",
                "Show me the paintings sometime",
            ]
        )
    ),
    (),
    0,
)


def test_every_system_answers_with_turns_best_first(tmp_path: Path) -> None:
    for build in (plain_bm25, search_nodes):
        with build(CONVERSATION, tmp_path) as search:
            assert search("Who went sailing?")[0] == "D1:2", build


def test_search_nodes_counts_only_its_hits_not_their_neighbours(tmp_path: Path) -> None:
    """Both Person nodes are hits (their label), whose neighbours are all the turns: only
    the two turns that say "windy" are hits beside them."""
    with written(CONVERSATION, tmp_path) as reader:
        hits = turn_hits(reader, "which person said windy", 25)
    assert sorted(h[0] for h in hits) == ["D1:3", "D1:4"]


def test_session_context_brings_the_turns_around_a_hit(tmp_path: Path) -> None:
    with search_nodes_in_context(CONVERSATION, tmp_path) as search:
        answer = search("capsized")
    assert answer == ["D1:4", "D1:3", "D1:5", "D1:2", "D1:6"]


def test_one_memory_keeps_every_conversation_apart_by_its_ids_and_sessions() -> None:
    other = Conversation(
        "conv-2",
        ("Cy", "Di"),
        (Turn("D1:1", "Cy", "I went sailing too", 1, 0),),
        (Question("Who sailed?", 4, ("D1:1",)),),
        1,
    )
    merged = one_memory([CONVERSATION, other])
    assert [t.dia_id for t in merged.turns][-2:] == ["conv-9/D1:6", "conv-2/D1:1"]
    assert len({t.session for t in merged.turns}) == 2  # each conversation's session its own
    assert merged.questions == (Question("Who sailed?", 4, ("conv-2/D1:1",)),)
    assert merged.unanswerable == 1


def test_the_lexical_baseline_drops_function_words_and_lends_to_neighbours(
    tmp_path: Path,
) -> None:
    with lexical_baseline(CONVERSATION, tmp_path) as search:
        assert search("what was it")[:1] == ["D1:3"]  # all function words: kept as asked
        answer = search("were they capsized?")
    assert answer == ["D1:4", "D1:3", "D1:5", "D1:2", "D1:6"]  # one hit, then beside it
