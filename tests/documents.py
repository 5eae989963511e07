"""A long document the tests of documents as observations record (issue 39): about a
megabyte of varied sentences, made the same way every time, with one distinctive fact in
its middle paragraph that no other sentence shares a word with."""

from __future__ import annotations

import random

FACT = "The lighthouse keeper Ottoline Varga logged a tide of 4.7 metres at Skerryvore."
QUESTION = "what tide did the lighthouse keeper Ottoline Varga log?"
_WHO = ["The committee", "A visiting engineer", "Our neighbour", "The archivist", "Every clerk",
        "The orchestra", "A young farmer", "The mayor", "Several students", "The baker"]  # fmt: skip
_DID = ["reviewed", "painted", "carried", "described", "ordered", "repaired", "borrowed",
        "photographed", "counted", "praised", "questioned", "delivered"]  # fmt: skip
_WHAT = ["the old bridge", "a basket of apples", "the winter accounts", "three wooden chairs",
         "the village records", "a copper kettle", "the garden wall", "an unfinished novel",
         "the railway timetable", "a box of letters", "the school roof"]  # fmt: skip
_WHEN = ["before noon", "after the storm", "on a quiet Sunday", "during the fair",
         "late in the autumn", "with great care", "for the second time", "without a word"]  # fmt: skip


def document(size: int = 1_000_000, seed: int = 39) -> tuple[str, int]:
    """A text of at least ``size`` characters and the offset of ``FACT`` in it (the start of
    the paragraph nearest its middle)."""
    chance = random.Random(seed)
    paragraphs: list[str] = []
    length, fact_at = 0, -1
    while length < size:
        sentences = [
            f"{chance.choice(_WHO)} {chance.choice(_DID)} {chance.choice(_WHAT)} "
            f"{chance.choice(_WHEN)}, number {chance.randrange(10_000)}."
            for _ in range(chance.randrange(3, 9))
        ]
        if fact_at < 0 and length >= size // 2:
            fact_at = length
            sentences.insert(0, FACT)
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        length += len(paragraph) + 2
    return "\n\n".join(paragraphs), fact_at
