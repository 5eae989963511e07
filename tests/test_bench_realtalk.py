"""The recall bench reads REALTALK as its authors laid it out: sessions in order whatever the
message ids say, each question's evidence the messages the conversation has, and files that
are not the ones measured refused (on a small conversation made here; the real data is
never needed by the tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import realtalk_data


def _message(dia_id: str, speaker: str, text: str) -> dict[str, object]:
    return {"clean_text": text, "speaker": speaker, "dia_id": dia_id, "date_time": "1.1.2024"}


CHAT = {
    "name": {"speaker_1": "Emi", "speaker_2": "elise"},
    "session_10": [_message("D9:1", "Emi", "Back from Denver")],
    "events_session_10": {"agent_a": [], "agent_b": []},
    "session_2": [
        _message("D1:40", "Emi", "Hey Emily!"),
        _message("D1:41", "elise", "Hi Kate, I went skiing"),
    ],
    "session_2_date_time": "30.12.2023, 22:21:48",
    "qa": [
        {"question": "Where did Kate go?", "answer": "Denver", "evidence": ["D9:1"], "category": 1},
        {"question": "Who skied?", "evidence": ["D1:41", "D77:1"], "category": 2},
        {"question": "What is unknown?", "evidence": ["D99:9"], "category": 3},
    ],
}


def test_realtalk_is_read_in_session_order_with_each_questions_messages(tmp_path: Path) -> None:
    (tmp_path / "Chat_1_Emi_Elise.json").write_text(json.dumps(CHAT))
    (tmp_path / "README.md").write_text("not a conversation")
    (conversation,) = realtalk_data.load(tmp_path)
    assert conversation.sample_id == "Chat_1_Emi_Elise"
    assert conversation.speakers == ("Emi", "elise")
    assert [(t.dia_id, t.session, t.position) for t in conversation.turns] == [
        ("D1:40", 2, 0),
        ("D1:41", 2, 1),
        ("D9:1", 10, 0),
    ]
    assert [q.evidence for q in conversation.questions] == [("D9:1",), ("D1:41",)]
    assert conversation.unanswerable == 1


def test_files_that_are_not_the_ones_measured_are_refused(tmp_path: Path) -> None:
    (tmp_path / "Chat_1_Emi_Elise.json").write_text(json.dumps(CHAT))
    with pytest.raises(ValueError, match="not REALTALK's ten files"):
        realtalk_data.locate(tmp_path)
