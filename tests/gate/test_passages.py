"""The splitter the gate cuts a document with (``gate.passages``): passages cover the text
in order, none longer than the bound, ending where a paragraph ends if one fits, else a
sentence, else a word."""

from __future__ import annotations

from tests.documents import document
from writegate.gate.passages import MAX_PASSAGE, passage_starts


def spans(text: str, most: int = MAX_PASSAGE) -> list[str]:
    starts = passage_starts(text, most)
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def test_a_text_that_fits_is_one_passage() -> None:
    assert passage_starts("One sentence. Two sentences.\n\nA paragraph.") == [0]
    assert passage_starts("x" * MAX_PASSAGE) == [0]


def test_passages_cover_the_text_in_order_and_none_is_longer_than_the_bound() -> None:
    text, _ = document(200_000)
    pieces = spans(text)
    assert "".join(pieces) == text
    assert max(map(len, pieces)) <= MAX_PASSAGE
    assert len(pieces) > 200_000 // MAX_PASSAGE  # cut, not kept as one


def test_a_passage_ends_where_a_paragraph_ends_when_one_fits() -> None:
    paragraphs = [f"Paragraph {i} says a little. It says a bit more." for i in range(40)]
    text = "\n\n".join(paragraphs)
    pieces = spans(text, 200)
    assert all(p.endswith("\n\n") for p in pieces[:-1])
    assert all(len(p) <= 200 for p in pieces)


def test_a_long_paragraph_is_cut_after_a_sentence() -> None:
    text = " ".join(f"Sentence number {i} is short." for i in range(60))
    pieces = spans(text, 150)
    assert all(p.endswith("short. ") for p in pieces[:-1])
    assert "".join(pieces) == text


def test_a_sentence_longer_than_a_passage_is_cut_after_a_word() -> None:
    text = " ".join(f"word{i}" for i in range(400)) + "."
    pieces = spans(text, 100)
    assert all(p.endswith(" ") and len(p) <= 100 for p in pieces[:-1])
    assert "".join(pieces) == text


def test_a_word_longer_than_a_passage_is_cut_where_it_must_be() -> None:
    pieces = spans("y" * 250, 100)
    assert [len(p) for p in pieces] == [100, 100, 50]
