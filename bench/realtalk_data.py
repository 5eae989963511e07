"""REALTALK: real people's messaging over 21 days, the second memory benchmark ``bench_recall``
asks, of another kind than LoCoMo (whose conversations a model wrote).

Source: Lee, Maharana, Pujara, Ren and Barbieri, "REALTALK: A 21-Day Real-World Dataset for
Long-Term Conversation" (arXiv:2502.13270, 2025), the ten files ``data/Chat_*.json`` of the
authors' repository (github.com/danny911kr/REALTALK, commit b903e06a9770bf4e5fe9018c3e132889666d3b4a):
ten conversations between two of ten people, 8,944 messages in 219 sessions, 728 memory
questions in LoCoMo's categories 1 to 3, each naming the messages that answer it. The
repository states no licence: the files are read here to measure, never shipped; they live
in ``var/bench-data/realtalk/`` (git-ignored), checked against ``SHA256`` (of the ten
files' names and bytes, in name order) each time they are read.

Unlike LoCoMo the speakers write as people do — short messages, several in a row, names
that are not the speakers' (Emi is "Kate" in the text) — so what a speaker's name adds to a
search on LoCoMo it cannot add here. Message ids follow the people's days, not the
sessions (session 4 begins at ``D3:30``), so a turn's place is counted here, in file order.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, TypeAdapter

from bench.recall_data import Conversation, DataMissing, Question, Turn

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "var" / "bench-data" / "realtalk"
SHA256 = "d49725b0cd831d605d21f93305a692a6819182a14d923f2e2f7137c491348dc8"
SOURCE = (
    "REALTALK (Lee et al., arXiv:2502.13270, 2025), data/Chat_*.json of "
    "github.com/danny911kr/REALTALK at b903e06, no licence stated (read, never shipped)"
)
_SESSION = re.compile(r"session_(\d+)")
_FILE = re.compile(r"Chat_\d+_\w+\.json")


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    speaker: str
    dia_id: str
    clean_text: str
    date_time: str | None = None  # "29.12.2023, 00:51:12"

    def said_at(self) -> datetime | None:
        """When it was sent, as the file writes it (the day alone in some)."""
        for form in ("%d.%m.%Y, %H:%M:%S", "%d.%m.%Y"):
            try:
                return datetime.strptime(self.date_time or "", form).replace(tzinfo=UTC)
            except ValueError:
                continue
        return None


class _Qa(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: str
    category: int
    evidence: list[str] = []


_MESSAGES = TypeAdapter(list[_Message])
_QAS = TypeAdapter(list[_Qa])


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if _FILE.fullmatch(path.name):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def locate(given: Path | None = None) -> Path:
    """The checked folder: ``given`` (the repository's ``data/`` folder, or one holding its
    ten files) copied into the cache, or the cache. DataMissing when there is neither;
    ValueError for files that are not the ones the numbers were taken on."""
    if given is not None:
        if (found := _digest(given)) != SHA256:
            raise ValueError(f"{given}: sha256 {found}, not REALTALK's ten files ({SHA256})")
        CACHE.mkdir(parents=True, exist_ok=True)
        for path in given.iterdir():
            if _FILE.fullmatch(path.name) and given.resolve() != CACHE.resolve():
                shutil.copyfile(path, CACHE / path.name)
    elif not CACHE.is_dir():
        raise DataMissing(
            f"REALTALK's files are not in {CACHE.relative_to(ROOT)}: bring them once with "
            f"--realtalk PATH (the data/ folder of a checkout; {SOURCE})"
        )
    if (found := _digest(CACHE)) != SHA256:
        raise ValueError(f"{CACHE}: sha256 {found}, not REALTALK's ten files ({SHA256})")
    return CACHE


def load(folder: Path) -> list[Conversation]:
    """The ten conversations, their messages in session order, each question's evidence the
    messages it names that the conversation has."""
    return [
        _conversation(path)
        for path in sorted(folder.iterdir(), key=lambda p: p.name)
        if _FILE.fullmatch(path.name)
    ]


def _conversation(path: Path) -> Conversation:
    document = _Document.model_validate_json(path.read_bytes())
    sessions = sorted(
        (int(m.group(1)), value)
        for key, value in (document.model_extra or {}).items()
        if (m := _SESSION.fullmatch(key))
    )
    turns = tuple(
        Turn(m.dia_id, m.speaker, m.clean_text, number, position, m.said_at())
        for number, value in sessions
        for position, m in enumerate(_MESSAGES.validate_python(value))
    )
    known = {t.dia_id for t in turns}
    questions = []
    for qa in document.qa:
        if evidence := tuple(dict.fromkeys(e for e in qa.evidence if e in known)):
            questions.append(Question(qa.question, qa.category, evidence))
    return Conversation(
        path.stem,
        (document.name.speaker_1, document.name.speaker_2),
        turns,
        tuple(questions),
        len(document.qa) - len(questions),
    )


class _Names(BaseModel):
    model_config = ConfigDict(extra="ignore")

    speaker_1: str
    speaker_2: str


class _Document(BaseModel):
    model_config = ConfigDict(extra="allow")  # session_N, events_session_N, session_N_date_time

    name: _Names
    qa: list[_Qa]
