"""Blocking: the few rows a name is indexed under, and the bounded ranges a new name probes.

Two names are compared only if a probe of one meets a row of the other, so this decides the
candidate step's recall; each probe is a key range read with a small LIMIT, so its cost does
not grow with the graph. Rows (``projections.state.blocking``) are ``family:LEAD|i|OTHER|text``
(Metaphone sounds, which read "Tchaikovsky"/"Chaikovsky" and "Muhammad"/"Mohammed" alike):

* a person: the last word's sound led, with the first word's initial and sound
  (``p:TRNK|a|ALN|alan turing``), and the first word's led with the last word's
  (``p:ALN|t|TRNK|…``), so a slip in one word still leaves the other to meet by; one row
  (``m:``) for a person of one word;
* an organisation: its first two distinctive (non-generic) words, each leading the other
  (``o:BLSTN|l|LJST|…``), or its one distinctive word (``o:AKM|||acme``), all its words
  joined (``j:``, for "Price Waterhouse"/"Pricewaterhouse"), and its acronym (``a:ibm``).

A new name probes, for each row it would have, the range of rows whose lead sound and second
initial are its own and whose second sound begins as its own does (``p:TRNK|a|AL``: "Alan",
"Allan", "Alain" Turing, and "Alan Mathison Turing"), starting at its own text (equal normal
forms come first); a first name given as an initial probes every first name with that letter
("A. Turing"), and a full one the initials; a nickname probes as its name would ("Bill
Gates"/"William Gates"), and a middle word as a last one ("Gabriel García Márquez"/"Gabriel
García").
"""

from __future__ import annotations

from collections.abc import Iterable

from writegate.gate.resolution.normalize import NormalizedName, normalize
from writegate.gate.resolution.vocabulary import DEFAULT_RULES, Kind, NameRules
from writegate.projections.state.blocking import (
    after,
    block,
    flat_row,
    joined_sound,
    organisation_rows,
    person_rows,
    row,
    sound,
)

Range = tuple[str, str, bool]
"""Keys ``start <= key < stop``, read descending if the flag says so."""

ACRONYM_FILLERS = frozenset({"of", "and", "the", "for", "de", "la", "und"})
"""Words an acronym leaves out ("Bank of America": "ba"; names and field values alike)."""
MIN_ACRONYM = 3
"""Two-letter acronyms ("HP") would each be shared by thousands of names: not indexed."""
SOUND_PREFIX = 2
"""A probe meets second words whose sound begins with the same this many letters."""
MIDDLE_WORDS = 2
"""A person's middle words probed as if each were the last ("García" of "García Márquez")."""


def acronym(name: NormalizedName) -> str | None:
    """What the name would be abbreviated to ("international business machines" -> "ibm"),
    or the name itself if it is one short word; None when it has no sensible acronym."""
    words = [w for w in name.tokens if w not in ACRONYM_FILLERS]
    if len(words) == 1 and 2 <= len(words[0]) <= 5:
        return words[0]
    if 2 <= len(words) <= 6:
        return "".join(w[0] for w in words)
    return None


def blocking_keys(name: str, kind: Kind, rules: NameRules | None = None) -> frozenset[str]:
    """The rows ``name`` is indexed under (see the module docstring)."""
    rules = rules or DEFAULT_RULES[kind]
    return keys_of(normalize(name, kind, rules), kind, rules)


def _distinctive(name: NormalizedName, rules: NameRules) -> list[str]:
    return [w for w in name.tokens if w not in rules.generic] or list(name.tokens)


def _short(name: NormalizedName) -> str | None:
    short = acronym(name)
    return short if short and len(short) >= MIN_ACRONYM else None


def keys_of(name: NormalizedName, kind: Kind, rules: NameRules | None = None) -> frozenset[str]:
    """``blocking_keys`` for a name already normalized (the gate normalizes once per write)."""
    rules = rules or DEFAULT_RULES[kind]
    words, text = list(name.tokens), name.text
    if not words:
        return frozenset()
    if kind == "person":
        return frozenset(person_rows(words, text))
    rows = organisation_rows(_distinctive(name, rules), text)
    if len(words) > 1:
        rows.add(flat_row("j", joined_sound(name.joined), text))
    if short := _short(name):
        rows.add(flat_row("a", short, text))
    return frozenset(rows)


def _around(own: str, start: str) -> list[Range]:
    """The rows of the block at ``start`` nearest ``own`` in key order: from it on (equal
    texts first, then second words sounding a little later) and just before it."""
    return [(own, after(start), False), (start, own, True)]


def _prefix(prefix: str) -> Range:
    return prefix, after(prefix), False


def probes_of(name: NormalizedName, kind: Kind, rules: NameRules | None = None) -> list[Range]:
    """The ranges a write of ``name`` probes (see the module docstring), without the label."""
    rules = rules or DEFAULT_RULES[kind]
    words, text = list(name.tokens), name.text
    if not words:
        return []
    ranges: list[Range] = []
    if kind == "person" and len(words) == 1:
        ranges += _around(row("m", words[0], "", text), block("m", words[0], ""))
    elif kind == "person":
        first, last = words[0], words[-1]
        ranges += _around(row("p", last, first, text), block("p", last, first[0]))
        if len(first) > 1:
            ranges += _around(row("p", first, last, text), block("p", first, last[0]))
        for nick in sorted(rules.nicknames.get(first, ())):
            ranges.append(_prefix(f"{block('p', last, nick[0])}{sound(nick)[:SOUND_PREFIX]}"))
            ranges.append(_prefix(f"{block('p', nick, last[0])}{sound(last)[:SOUND_PREFIX]}"))
        for middle in [w for w in words[1:-1] if len(w) > 1][:MIDDLE_WORDS]:
            ranges.append(_prefix(f"{block('p', middle, first[0])}{sound(first)[:SOUND_PREFIX]}"))
    else:
        distinctive = _distinctive(name, rules)
        if len(distinctive) == 1:
            ranges += _around(row("o", distinctive[0], "", text), block("o", distinctive[0], ""))
        else:
            one, two = distinctive[:2]
            ranges += _around(row("o", one, two, text), block("o", one, two[0]))
            ranges += _around(row("o", two, one, text), block("o", two, one[0]))
            ranges.append(_prefix(block("o", one, "")))  # "Acme" beside "Acme Bank"
        if len(words) > 1:  # "Price Waterhouse" beside "Pricewaterhouse"
            ranges.append(_prefix(block("o", name.joined, "")))
        ranges.append(_prefix(flat_row("j", joined_sound(name.joined), "")))
        if short := _short(name):
            ranges.append(_prefix(flat_row("a", short, "")))
    return list(dict.fromkeys(ranges))


def meets(ranges: Iterable[Range], rows: Iterable[str]) -> bool:
    """Whether a probe of ``ranges`` would find any of ``rows`` (with no LIMIT)."""
    spans = list(ranges)
    return any(start <= key < stop for key in rows for start, stop, _ in spans)
