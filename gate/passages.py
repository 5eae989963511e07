"""Cutting a long text into passages: what the text index holds of a document, and what a
fact cites of it (``<observation id>#<start>``).

The gate cuts a text once, when it is recorded, and the event keeps where each passage
starts (``ObservationRecorded.passages``): a replay reads those cuts and never cuts again,
so a better splitter later moves no passage a fact already cites. A passage is at most
``MAX_PASSAGE`` characters and ends where a paragraph ends if one fits, else where a
sentence ends, else after a word (a word longer than a passage is cut where it must be).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_PASSAGE = 2_000  # characters: a few paragraphs, small enough to answer with
# characters: a text up to this — any a single value could hold before documents were kept —
# is one observation as it always was, searched and answered whole under the id it had
WHOLE_UP_TO = 65_536
_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")  # a blank line (and what follows it)
# a sentence's end: its mark, any closing quotes or brackets, the space after
_SENTENCE = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*\s+")
_SPACE = re.compile(r"\s+")


def passage_starts(text: str, most: int = MAX_PASSAGE) -> list[int]:
    """Where each passage of ``text`` starts: ``[0]`` for a text that is one passage (one
    of at most ``most`` characters).
    Passages are whole units (paragraphs, else sentences, else words) packed greedily, so
    each is as long as ``most`` allows without cutting a unit that fits."""
    starts = [0]
    last = 0  # the end of the last unit taken: the latest place a passage may end
    for end in _unit_ends(text, most):
        if end - starts[-1] > most:
            starts.append(last)
        last = end
    return starts


def _unit_ends(text: str, most: int) -> Iterator[int]:
    """The end of each unit of ``text``, in order, none longer than ``most``: paragraphs,
    a long paragraph's sentences, a long sentence's words."""
    for start, end in _pieces(text, 0, len(text), _PARAGRAPH):
        if end - start <= most:
            yield end
            continue
        for s_start, s_end in _pieces(text, start, end, _SENTENCE):
            if s_end - s_start <= most:
                yield s_end
            else:
                yield from _word_cuts(text, s_start, s_end, most)


def _pieces(
    text: str, start: int, end: int, boundary: re.Pattern[str]
) -> Iterator[tuple[int, int]]:
    """``text[start:end]`` cut after each match of ``boundary`` (the match kept with the
    piece before it)."""
    at = start
    for found in boundary.finditer(text, start, end):
        if found.end() > at:
            yield at, found.end()
            at = found.end()
    if at < end:
        yield at, end


def _word_cuts(text: str, start: int, end: int, most: int) -> Iterator[int]:
    """Ends within ``text[start:end]`` at most ``most`` apart, each after the last space
    that fits (at ``most`` itself where none does)."""
    at = start
    while end - at > most:
        spaces = [m.end() for m in _SPACE.finditer(text, at + 1, at + most)]
        cut = spaces[-1] if spaces else at + most
        yield cut
        at = cut
    yield end


def document_starts(text: str) -> list[int]:
    """Where each passage of a recorded text starts: ``[0]`` up to ``WHOLE_UP_TO``
    characters (an agent's turn, a tool's output: kept and found whole, as before)."""
    return passage_starts(text) if len(text) > WHOLE_UP_TO else [0]
