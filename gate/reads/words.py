"""The words of a query met in what an answer holds: a node's label and string values, a
relationship's type, folded as the text index compares them (lower case, no diacritics),
so an answer can say which of the question's words each part of it meets.
"""

from __future__ import annotations

import re
import unicodedata

from writegate.gate.reads.query_graphs import Words
from writegate.projections.state import entity_text

_WORD = re.compile(r"[^\W_]+")  # letters and digits, as the text index's tokenizers keep


def _folded(text: str) -> str:
    """Lower case without diacritics, as the index compares words (ASCII has none: a
    query's answer folds some 50 texts, each a character at a time otherwise)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def text_words(text: str) -> set[str]:
    """The folded words of a text."""
    return set(_WORD.findall(_folded(text)))


def node_words(words: Words | None) -> set[str]:
    """The folded words of a node's label and string values (none for a node not read)."""
    return set() if words is None else text_words(entity_text(*words))


def matched(wanted: list[str], said: set[str]) -> list[str]:
    """The query's words that begin a word of ``said``, in the query's order (a word
    begins one of them where it follows a line's start in their lines: one search each,
    not one a pair; words hold no line break)."""
    lines = "\n" + "\n".join(said)
    return [w for w in wanted if "\n" + w in lines]
