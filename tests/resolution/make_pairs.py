"""Build fixtures/resolution/pairs.jsonl: the hand-curated pairs, then generated ones.

Each generated pair comes from a *recipe*: a true variant of one synthetic name (case,
spacing, diacritics, order, initials, titles, typos, transliterations, legal forms...) or
two distinct entities whose names are alike (relatives, alike names, another legal form,
another line of business...). The recipe's note is the line's ``why``. Deterministic.

usage: python -m tests.resolution.make_pairs           # rewrite the fixture
       python -m tests.resolution.make_pairs --check   # exit 1 if it is not up to date
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable

from tests.resolution.synth import (
    INSTITUTIONS,
    LEGAL_FORMS,
    LEGAL_SPELLINGS,
    ROOT,
    TITLES,
    Words,
    ascii_only,
    brand,
    load_words,
    typo,
    typo_in_name,
)
from writegate.gate.resolution.evaluate import LabelledPair, parse_pairs
from writegate.gate.resolution.vocabulary import Kind

FOLDER = ROOT / "fixtures" / "resolution"
CURATED = FOLDER / "curated.jsonl"
PAIRS = FOLDER / "pairs.jsonl"
SEED = 12

Maker = Callable[[Words, random.Random], tuple[str, str]]


def _person(w: Words, rng: random.Random) -> tuple[str, str]:
    return rng.choice(w.given), rng.choice(w.surnames)


def _accented(w: Words, rng: random.Random) -> tuple[str, str]:
    while True:
        given, surname = _person(w, rng)
        if not f"{given}{surname}".isascii():
            return given, surname


def _organisation(w: Words, rng: random.Random, legal: bool = True) -> str:
    head, tail = brand(w, rng)
    suffix = f" {rng.choice(LEGAL_FORMS)}" if legal and rng.random() < 0.6 else ""
    return f"{head}{tail} {rng.choice(w.industries)}{suffix}"


def _two(group: tuple[str, ...], rng: random.Random) -> tuple[str, str]:
    first, second = rng.sample(group, 2)
    return first, second


def _case(w: Words, r: random.Random) -> tuple[str, str]:
    name = " ".join(_person(w, r))
    return name, name.upper() if r.random() < 0.5 else name.lower()


def _spacing(w: Words, r: random.Random) -> tuple[str, str]:
    given, surname = _person(w, r)
    return f"{given} {surname}", r.choice((f"  {given}   {surname} ", f"{given}  {surname}"))


def _diacritics(w: Words, r: random.Random) -> tuple[str, str]:
    name = " ".join(_accented(w, r))
    return name, ascii_only(name)


def _surname_first(w: Words, r: random.Random) -> tuple[str, str]:
    given, surname = _person(w, r)
    return f"{given} {surname}", r.choice((f"{surname}, {given}", f"{surname.upper()}, {given}"))


def _initial(w: Words, r: random.Random) -> tuple[str, str]:
    given, surname = _person(w, r)
    return f"{given} {surname}", r.choice((f"{given[0]}. {surname}", f"{surname}, {given[0]}."))


def _middle_initial(w: Words, r: random.Random) -> tuple[str, str]:
    (given, surname), middle = _person(w, r), r.choice(w.given)
    return f"{given} {middle} {surname}", f"{given} {middle[0]}. {surname}"


def _middle_dropped(w: Words, r: random.Random) -> tuple[str, str]:
    (given, surname), middle = _person(w, r), r.choice(w.given)
    return f"{given} {middle} {surname}", f"{given} {surname}"


def _title(w: Words, r: random.Random) -> tuple[str, str]:
    given, surname = _person(w, r)
    titled = (f"{r.choice(TITLES)} {given} {surname}", f"{given} {surname}, PhD")
    return f"{given} {surname}", r.choice(titled)


def _person_typo(w: Words, r: random.Random) -> tuple[str, str]:
    name = " ".join(_person(w, r))
    return name, typo_in_name(name, r)


def _transliterated(w: Words, r: random.Random) -> tuple[str, str]:
    given, surname = _person(w, r)
    if r.random() < 0.5:
        one, two = _two(r.choice(w.given_spellings), r)
        return f"{one} {surname}", f"{two} {surname}"
    one, two = _two(r.choice(w.surname_spellings), r)
    return f"{given} {one}", f"{given} {two}"


def _accented_reordered(w: Words, r: random.Random) -> tuple[str, str]:
    given, surname = _accented(w, r)
    return f"{given} {surname}", ascii_only(f"{surname}, {given}")


def _relatives(w: Words, r: random.Random) -> tuple[str, str]:
    surname, (one, two) = r.choice(w.surnames), _two(w.given, r)
    return f"{one} {surname}", f"{two} {surname}"


def _alike_given(w: Words, r: random.Random) -> tuple[str, str]:
    surname, (one, two) = r.choice(w.surnames), _two(r.choice(w.near_given), r)
    return f"{one} {surname}", f"{two} {surname}"


def _alike_surname(w: Words, r: random.Random) -> tuple[str, str]:
    given, (one, two) = r.choice(w.given), _two(r.choice(w.near_surnames), r)
    return f"{given} {one}", f"{given} {two}"


def _generations(w: Words, r: random.Random) -> tuple[str, str]:
    name = " ".join(_person(w, r))
    one, two = r.choice((("", " Jr."), (" Sr.", " Jr."), (" II", " III"), (", Jr.", " Sr.")))
    return f"{name}{one}", f"{name}{two}"


def _other_middle(w: Words, r: random.Random) -> tuple[str, str]:
    (given, surname), (one, two) = _person(w, r), _two(w.given, r)
    if one[0] == two[0]:  # an initial would fit both: not a clear non-match
        return given, given
    if r.random() < 0.5:
        one, two = f"{one[0]}.", f"{two[0]}."
    return f"{given} {one} {surname}", f"{given} {two} {surname}"


def _namesakes(w: Words, r: random.Random) -> tuple[str, str]:
    given, (one, two) = r.choice(w.given), _two(w.surnames, r)
    return f"{given} {one}", f"{given} {two}"


def _org_case(w: Words, r: random.Random) -> tuple[str, str]:
    name = _organisation(w, r)
    return name, name.upper()


def _legal_spelling(w: Words, r: random.Random) -> tuple[str, str]:
    name, (one, two) = _organisation(w, r, legal=False), _two(r.choice(LEGAL_SPELLINGS), r)
    return f"{name} {one}", f"{name} {two}"


def _legal_dropped(w: Words, r: random.Random) -> tuple[str, str]:
    name = _organisation(w, r, legal=False)
    return f"{name} {r.choice(LEGAL_FORMS)}", name


def _article(w: Words, r: random.Random) -> tuple[str, str]:
    name = _organisation(w, r)
    return name, f"The {name}"


def _org_punctuation(w: Words, r: random.Random) -> tuple[str, str]:
    name, legal = _organisation(w, r, legal=False), r.choice(LEGAL_FORMS)
    return f"{name}, {legal}", f"{name} {legal.replace('.', '')}"


def _org_typo(w: Words, r: random.Random) -> tuple[str, str]:
    name = _organisation(w, r)
    head, _, rest = name.partition(" ")
    return name, f"{typo(head, r)} {rest}"


def _split_brand(w: Words, r: random.Random) -> tuple[str, str]:
    (head, tail), industry = brand(w, r), r.choice(w.industries)
    return f"{head}{tail} {industry}", f"{head} {tail.capitalize()} {industry}"


def _ampersand(w: Words, r: random.Random) -> tuple[str, str]:
    one, two = _two(w.surnames, r)
    return f"{one} & {two}", f"{one} and {two}"


def _org_diacritics(w: Words, r: random.Random) -> tuple[str, str]:
    place = r.choice([p for p in w.places if not p.isascii()])
    name = r.choice((f"{place} {r.choice(w.industries)}", f"{r.choice(INSTITUTIONS)} {place}"))
    return name, ascii_only(name)


def _abbreviated(w: Words, r: random.Random) -> tuple[str, str]:
    head, tail = brand(w, r)
    if r.random() < 0.5:
        return f"{head}{tail} International", f"{head}{tail} Intl."
    place = r.choice(w.places)
    return f"University of {place}", f"Univ. of {place}"


def _university_order(w: Words, r: random.Random) -> tuple[str, str]:
    place = r.choice(w.places)
    return f"University of {place}", f"{place} University"


def _acronym(w: Words, r: random.Random) -> tuple[str, str]:
    (head, tail), industry = brand(w, r), r.choice(w.industries)
    return f"{head} {tail.capitalize()} {industry}", f"{head[0]}{tail[0]}{industry[0]}".upper()


def _other_business(w: Words, r: random.Random) -> tuple[str, str]:
    (head, tail), (one, two) = brand(w, r), _two(w.industries, r)
    return f"{head}{tail} {one}", f"{head}{tail} {two}"


def _alike_brand(w: Words, r: random.Random) -> tuple[str, str]:
    (head, tail), (other_head, other_tail), industry = (
        brand(w, r),
        brand(w, r),
        r.choice(w.industries),
    )
    other = f"{other_head}{tail}" if r.random() < 0.5 else f"{head}{other_tail}"
    return f"{head}{tail} {industry}", f"{other} {industry}"


def _other_legal_form(w: Words, r: random.Random) -> tuple[str, str]:
    name = _organisation(w, r, legal=False)
    one, two = _two(tuple(group[0] for group in LEGAL_SPELLINGS), r)
    return f"{name} {one}", f"{name} {two}"


def _other_place(w: Words, r: random.Random) -> tuple[str, str]:
    (one, two), institution = _two(w.places, r), r.choice(INSTITUTIONS)
    industry = r.choice(w.industries)
    return r.choice(
        (
            (f"{institution} {one}", f"{institution} {two}"),
            (f"{one} {industry}", f"{two} {industry}"),
        )
    )


def _other_institution(w: Words, r: random.Random) -> tuple[str, str]:
    place, (one, two) = r.choice(w.places), _two(INSTITUTIONS, r)
    return f"{one} {place}", f"{two} {place}"


def _other_partner(w: Words, r: random.Random) -> tuple[str, str]:
    first, (one, two) = r.choice(w.surnames), _two(w.surnames, r)
    if r.random() < 0.3:
        one, two = _two(r.choice(w.near_surnames), r)
    return f"{first} & {one}", f"{first} & {two}"


RECIPES: tuple[tuple[Kind, bool, str, int, Maker], ...] = (
    ("person", True, "case", 20, _case),
    ("person", True, "spacing", 15, _spacing),
    ("person", True, "diacritics dropped", 30, _diacritics),
    ("person", True, "surname first", 20, _surname_first),
    ("person", True, "given name as an initial", 20, _initial),
    ("person", True, "middle name as an initial", 15, _middle_initial),
    ("person", True, "middle name dropped", 15, _middle_dropped),
    ("person", True, "title or degree", 15, _title),
    ("person", True, "one typo", 45, _person_typo),
    ("person", True, "transliteration", 45, _transliterated),
    ("person", True, "diacritics dropped, surname first", 15, _accented_reordered),
    ("person", False, "relatives: same surname", 60, _relatives),
    ("person", False, "alike given names, same surname", 50, _alike_given),
    ("person", False, "same given name, alike surnames", 60, _alike_surname),
    ("person", False, "different generations", 25, _generations),
    ("person", False, "different middle names", 30, _other_middle),
    ("person", False, "same given name only", 20, _namesakes),
    ("organisation", True, "capitals", 20, _org_case),
    ("organisation", True, "legal form spelled differently", 40, _legal_spelling),
    ("organisation", True, "legal form dropped", 30, _legal_dropped),
    ("organisation", True, "article", 10, _article),
    ("organisation", True, "punctuation", 15, _org_punctuation),
    ("organisation", True, "one typo", 40, _org_typo),
    ("organisation", True, "brand spaced apart", 25, _split_brand),
    ("organisation", True, "ampersand", 20, _ampersand),
    ("organisation", True, "diacritics dropped", 15, _org_diacritics),
    ("organisation", True, "abbreviation", 15, _abbreviated),
    ("organisation", True, "word order", 10, _university_order),
    ("organisation", True, "acronym", 10, _acronym),
    ("organisation", False, "same brand, another business", 60, _other_business),
    ("organisation", False, "alike brands, same business", 50, _alike_brand),
    ("organisation", False, "another legal form: another entity", 30, _other_legal_form),
    ("organisation", False, "another place", 30, _other_place),
    ("organisation", False, "another institution, same place", 20, _other_institution),
    ("organisation", False, "another partner", 30, _other_partner),
)


def curated() -> list[LabelledPair]:
    return parse_pairs(CURATED.read_text(encoding="utf-8"))


def generated(seen: set[tuple[str, str]]) -> list[LabelledPair]:
    words, rng = load_words(), random.Random(SEED)
    pairs = []
    for kind, same, why, count, make in RECIPES:
        made = 0
        while made < count:
            a, b = make(words, rng)
            if a == b or (a, b) in seen or (b, a) in seen:
                continue
            seen.add((a, b))
            pairs.append(LabelledPair(a=a, b=b, kind=kind, same=same, why=why))
            made += 1
    return pairs


def build() -> str:
    pairs = curated()
    pairs += generated({(p.a, p.b) for p in pairs})
    return "".join(pair.model_dump_json() + "\n" for pair in pairs)


def main(argv: list[str]) -> int:
    text = build()
    if "--check" in argv:
        current = PAIRS.read_text(encoding="utf-8") if PAIRS.exists() else ""
        print("up to date" if current == text else f"{PAIRS} is out of date")
        return 0 if current == text else 1
    PAIRS.write_text(text, encoding="utf-8")
    print(f"wrote {text.count(chr(10))} pairs to {PAIRS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
