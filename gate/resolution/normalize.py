"""A name's normal form: what two spellings of one name have in common.

``fold`` removes what never tells names apart (case, width, diacritics, punctuation,
spacing); ``normalize`` then reads the words with the kind's ``NameRules`` (titles, legal
forms, "Turing, Alan" order). Everything later — blocking keys and scores — is computed
from a ``NormalizedName``, so two names with the same normal form can never be told apart.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from writegate.gate.resolution.vocabulary import DEFAULT_RULES, Kind, NameRules

# Letters that carry no diacritic to strip but are still read as a plain Latin letter.
_PLAIN = str.maketrans(
    {
        "ø": "o",
        "đ": "d",
        "ð": "d",
        "þ": "th",
        "ł": "l",
        "ŀ": "l",
        "æ": "ae",
        "œ": "oe",
        "\u0131": "i",  # dotless i
        "ħ": "h",
        "ŧ": "t",
        "ß": "ss",
        "&": " and ",
    }
)
_APOSTROPHES = re.compile("['\u2018\u2019\u02bc\u02bb`]")
_NOT_WORD = re.compile(r"[\W_]+")
ACRONYM_LENGTH = 6


def fold(text: str) -> str:
    """Lower-case, diacritic-free words separated by single spaces ("  José-Luis O'Brien!")."""
    if text.isascii():  # most names: nothing to compose, decompose or strip
        text = _APOSTROPHES.sub("", text.lower().replace("&", " and "))
        return " ".join(_NOT_WORD.sub(" ", text).split())
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = _APOSTROPHES.sub("", text.translate(_PLAIN))
    return unicodedata.normalize("NFC", " ".join(_NOT_WORD.sub(" ", text).split()))


@dataclass(frozen=True, slots=True)
class NormalizedName:
    """The identity-bearing words of a name, in order, and the qualifiers stripped from it."""

    tokens: tuple[str, ...]
    qualifiers: frozenset[str]
    text: str
    """The words in order, space-separated."""
    key: str
    """The words sorted, space-separated: the exact-match blocking key."""
    joined: str
    """The words with no spaces ("price waterhouse" and "pricewaterhouse" agree here)."""
    acronym: bool
    """One short word written as an acronym ("IBM", "I.B.M."): case is the only evidence,
    so it is read before folding."""

    @classmethod
    def of(cls, tokens: list[str], qualifiers: set[str], acronym: bool) -> NormalizedName:
        return cls(
            tokens=tuple(tokens),
            qualifiers=frozenset(qualifiers),
            text=" ".join(tokens),
            key=" ".join(sorted(tokens)),
            joined="".join(tokens),
            acronym=acronym,
        )


def normalize(name: str, kind: Kind, rules: NameRules | None = None) -> NormalizedName:
    """Read ``name`` as a ``kind`` with ``rules`` (the kind's defaults if none are given)."""
    if rules is None:
        return _normalized(name, kind, ())
    return _normalize(name, kind, rules)


def normalize_with(name: str, kind: Kind, stop_suffixes: tuple[str, ...]) -> NormalizedName:
    """``normalize`` under the kind's rules and a schema's extra stop suffixes, remembered."""
    return _normalized(name, kind, stop_suffixes)


@lru_cache(maxsize=64)
def rules_for(kind: Kind, stop_suffixes: tuple[str, ...] = ()) -> NameRules:
    """The kind's rules, with ``stop_suffixes`` (as a schema declares them) dropped too."""
    rules = DEFAULT_RULES[kind]
    if not stop_suffixes:
        return rules
    extra = frozenset(fold(suffix) for suffix in stop_suffixes)
    return rules.model_copy(update={"drop_suffixes": rules.drop_suffixes | extra})


@lru_cache(maxsize=4_096)
def _normalized(name: str, kind: Kind, stop_suffixes: tuple[str, ...]) -> NormalizedName:
    """``normalize`` remembered for the few names a write reads twice or more (the written
    name, candidates explained): candidates are scored from the normal text the index keeps."""
    return _normalize(name, kind, rules_for(kind, stop_suffixes))


def _normalize(name: str, kind: Kind, rules: NameRules) -> NormalizedName:
    qualifiers: set[str] = set()
    parts = [fold(part).split() for part in name.split(",")]
    stripped = [_strip_tail(words, rules, qualifiers) for words in parts]
    stripped = [words for words in stripped if words]
    if not stripped:  # the name is nothing but a qualifier ("Junior"): keep it as it is
        stripped, qualifiers = [w for w in parts if w], set()
    if kind == "person" and len(stripped) == 2:  # "Turing, Alan" is Alan Turing
        stripped.reverse()
    words = [word for part in stripped for word in part]
    if rules.join_initials:
        words = _join_initials(words)
    words = [rules.abbreviations.get(word, word) for word in words]
    while len(words) > 1 and words[0] in rules.drop_prefixes:
        del words[0]
    tail: set[str] = set()
    if len(words) > 1 and (core := _strip_tail(words, rules, tail)):
        words, qualifiers = core, qualifiers | tail
    return NormalizedName.of(words, qualifiers, _written_as_acronym(name, words))


def _written_as_acronym(name: str, words: list[str]) -> bool:
    """One word of at most six characters, written in capitals ("IBM", "I.B.M.", "NASA")."""
    if len(words) != 1 or len(words[0]) > ACRONYM_LENGTH:
        return False
    raw_words = (raw.replace(".", "") for raw in name.replace(",", " ").split())
    return any(len(raw) > 1 and raw.isupper() and fold(raw) == words[0] for raw in raw_words)


def _strip_tail(words: list[str], rules: NameRules, qualifiers: set[str]) -> list[str]:
    """Drop trailing suffixes and qualifiers, recording the qualifiers' canonical forms."""
    end = len(words)
    found: set[str] = set()
    while end and (words[end - 1] in rules.drop_suffixes or words[end - 1] in rules.qualifiers):
        end -= 1
        if words[end] in rules.qualifiers:
            found.add(rules.qualifiers[words[end]])
    qualifiers |= found
    return words[:end]


def _join_initials(words: list[str]) -> list[str]:
    """Join each run of two or more single-character words ("i b m" -> "ibm")."""
    out: list[str] = []
    run: list[str] = []
    for word in [*words, ""]:
        if len(word) == 1:
            run.append(word)
            continue
        if run:
            out.extend(["".join(run)] if len(run) > 1 else run)
            run = []
        if word:
            out.append(word)
    return out
