"""Synthetic names for the resolution fixture and bench, from hand-written word lists.

The lists are in fixtures/resolution/names/ (given names, surnames, industries, places,
the two parts of coined brands, transliteration groups, groups of distinct-but-alike names). Everything here is
deterministic given a ``random.Random``: the fixture it helps build is committed, and
tests/resolution/make_pairs.py checks the committed file is still what it makes.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

from pydantic import BaseModel, ConfigDict

ROOT = Path(__file__).resolve().parents[2]
NAMES = ROOT / "fixtures" / "resolution" / "names"

LEGAL_FORMS = ("Ltd", "Inc.", "Corp.", "LLC", "GmbH", "AG", "S.A.", "plc", "Co.")
# Spellings of one legal form; any two in a group name the same entity.
LEGAL_SPELLINGS = (
    ("Ltd", "Limited", "Ltd."),
    ("Inc.", "Inc", "Incorporated"),
    ("Corp.", "Corporation", "Corp"),
    ("LLC", "L.L.C."),
    ("S.A.", "SA"),
    ("plc", "PLC"),
    ("Co.", "Company"),
)
INSTITUTIONS = ("University of", "Bank of", "College of", "Museum of", "Port of", "Council of")
TITLES = ("Dr.", "Prof.", "Mr.", "Ms.", "Mrs.")


class Words(BaseModel):
    """The hand-written lists, read once."""

    model_config = ConfigDict(frozen=True)

    given: tuple[str, ...]
    surnames: tuple[str, ...]
    industries: tuple[str, ...]
    places: tuple[str, ...]
    brand_heads: tuple[str, ...]
    brand_tails: tuple[str, ...]
    given_spellings: tuple[tuple[str, ...], ...]
    surname_spellings: tuple[tuple[str, ...], ...]
    near_given: tuple[tuple[str, ...], ...]
    near_surnames: tuple[tuple[str, ...], ...]


def _lines(name: str) -> list[str]:
    text = (NAMES / name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def _groups(lines: list[str], slot: str) -> tuple[tuple[str, ...], ...]:
    """The " | "-separated groups on the lines that start with ``slot``."""
    return tuple(
        tuple(word.strip() for word in line.removeprefix(slot).split("|"))
        for line in lines
        if line.startswith(slot)
    )


def load_words() -> Words:
    spellings, near = _lines("transliterations.txt"), _lines("near_names.txt")
    return Words(
        given=tuple(_lines("given.txt")),
        surnames=tuple(_lines("surnames.txt")),
        industries=tuple(_lines("industries.txt")),
        places=tuple(_lines("places.txt")),
        brand_heads=tuple(_lines("brand_heads.txt")),
        brand_tails=tuple(_lines("brand_tails.txt")),
        given_spellings=_groups(spellings, "given:"),
        surname_spellings=_groups(spellings, "surname:"),
        near_given=_groups(near, "given:"),
        near_surnames=_groups(near, "surname:"),
    )


def brand(words: Words, rng: random.Random) -> tuple[str, str]:
    """A coined brand's two parts ("Blue", "stone"): it splits realistically ("Blue Stone"),
    and two short lists give thousands of distinct brands."""
    return rng.choice(words.brand_heads), rng.choice(words.brand_tails)


def ascii_only(text: str) -> str:
    """The text with its diacritics dropped, as a keyboard without them would type it."""
    decomposed = unicodedata.normalize("NFKD", text.replace("ø", "o").replace("Ø", "O"))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("ł", "l")


def typo(word: str, rng: random.Random) -> str:
    """One slip of the keyboard in a word of five or more letters."""
    i = rng.randrange(1, len(word) - 1)
    kind = rng.choice(("swap", "drop", "double", "replace"))
    if kind == "swap" and word[i] != word[i + 1]:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == "drop":
        return word[:i] + word[i + 1 :]
    if kind == "double":
        return word[:i] + word[i] + word[i:]
    letters = [c for c in "aeioulnrst" if c != word[i]]
    return word[:i] + rng.choice(letters) + word[i + 1 :]


def typo_in_name(name: str, rng: random.Random) -> str:
    words = name.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if not long:
        return name
    i = rng.choice(long)
    words[i] = typo(words[i], rng)
    return " ".join(words)


def person_name(words: Words, rng: random.Random) -> str:
    """One synthetic person as they might appear in a large graph."""
    given, surname = rng.choice(words.given), rng.choice(words.surnames)
    form = rng.random()
    if form < 0.35:
        return f"{given} {surname}"
    if form < 0.6:
        return f"{given} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {surname}"
    if form < 0.8:
        return f"{given} {rng.choice(words.given)} {surname}"
    return f"{given} {surname}-{rng.choice(words.surnames)}"


def organisation_name(words: Words, rng: random.Random) -> str:
    """One synthetic organisation as it might appear in a large graph."""
    form = rng.random()
    legal = f" {rng.choice(LEGAL_FORMS)}" if rng.random() < 0.5 else ""
    head, tail = brand(words, rng)
    if form < 0.5:
        return f"{head}{tail} {rng.choice(words.industries)}{legal}"
    if form < 0.6:
        return f"{head}{tail}{legal}"
    if form < 0.75:
        return f"{rng.choice(words.surnames)} & {rng.choice(words.surnames)}{legal}"
    if form < 0.85:
        return f"{rng.choice(INSTITUTIONS)} {rng.choice(words.places)}"
    return f"{rng.choice(words.places)} {rng.choice(words.industries)}{legal}"


def distinct_names(
    count: int, make: Callable[[Words, random.Random], str], seed: int = 12
) -> list[str]:
    """``count`` distinct names from ``make`` (person_name or organisation_name)."""
    words, rng = load_words(), random.Random(seed)
    names: dict[str, None] = {}
    while len(names) < count:
        names[make(words, rng)] = None
    return list(names)


def _halves(word: str) -> tuple[str, str]:
    """A surname cut after its first vowel group ("Kow|alski", "Bren|nan")."""
    vowels = "aeiouyáéíóúàèìòùäëïöüåøãõâêîôûæœ"
    i = next((n for n, c in enumerate(word.lower()) if c in vowels), 0)
    while i < len(word) and word[i].lower() in vowels:
        i += 1
    return word[:i], word[i:]


def rare_surnames(words: Words) -> tuple[str, ...]:
    """Tens of thousands of plausible surnames: each list surname's head joined to another's
    tail ("Brenalski"), in a fixed order (the commonest first, for ``realistic_person_name``)."""
    heads = sorted({_halves(s)[0] for s in words.surnames if " " not in s})
    tails = sorted({_halves(s)[1] for s in words.surnames if " " not in s})
    made = {f"{h}{t}" for h in heads for t in tails if len(h) + len(t) >= 4}
    ordered = [*words.surnames, *sorted(made - set(words.surnames))]
    random.Random(7).shuffle(ordered)
    return tuple(ordered)


class RealisticPeople:
    """People as a large real graph holds them: surnames in a long tail (Zipf-Mandelbrot,
    weight 1/(rank + 50): the commonest about 0.3% of people, the top thousand about half, as
    in census tables), given names less varied (weight 1/(rank + 5)). Unlike ``person_name``,
    whose 173 surnames make a 100,000-person graph dense in namesakes, a new person here
    mostly has no near-namesake: the write resolution lets through."""

    def __init__(self, words: Words) -> None:
        self.words = words
        self.surnames = rare_surnames(words)
        self.surname_weights = list(accumulate(1 / (r + 50) for r in range(len(self.surnames))))
        self.given = list(words.given)
        random.Random(7).shuffle(self.given)  # the list is alphabetical: ranks from nowhere
        self.given_weights = list(accumulate(1 / (r + 5) for r in range(len(self.given))))

    def __call__(self, words: Words, rng: random.Random) -> str:
        given = rng.choices(self.given, cum_weights=self.given_weights)[0]
        surname = rng.choices(self.surnames, cum_weights=self.surname_weights)[0]
        if rng.random() < 0.25:
            return f"{given} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {surname}"
        return f"{given} {surname}"


def realistic_names(count: int, seed: int = 12) -> list[str]:
    """``count`` distinct people from ``RealisticPeople``."""
    words = load_words()
    return distinct_names(count, RealisticPeople(words), seed)
