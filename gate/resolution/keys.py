"""Blocking keys: the few short strings a name is indexed under, so candidates are an index probe.

Two names are compared only if they share a key, so the keys decide the candidate step's
recall; each key must also stay selective (shared by few unrelated names). Every name gets
its exact key (``x:`` + sorted words), so equal normal forms always meet. The others are
phonetic (Metaphone, which reads "Tchaikovsky"/"Chaikovsky" and "Muhammad"/"Mohammed" alike):

* people: the sound of each later word with the first word's initial, and those of its
  nicknames (``p:TRNK|a`` for "Alan Turing", "A. Turing" and "Alan Mathison Turing";
  "Bill Gates" and "William Gates" meet under ``p:KTS|w``), the first word's sound with the
  last word's initial (``p:ALN|t``), so a typo in one word still leaves another key, and
  the sound of all words joined (``j:``, for "Mc Donald"/"McDonald");
* organisations: the sound of the first two distinctive (non-generic) words, each with the
  other's first two letters (``o:BLSTN|lo`` for "Bluestone Logistics"), or of the one word
  alone (``o:AKM`` for "Acme Corp" and "ACME Ltd", not for "Acme Bank"), the sound of all
  words joined (``j:``, for "Price Waterhouse"/"Pricewaterhouse"), and the acronym
  (``a:ibm``);
* a person named by one word: its sound alone (``m:``).
"""

from __future__ import annotations

import jellyfish

from writegate.gate.resolution.normalize import NormalizedName, normalize
from writegate.gate.resolution.vocabulary import DEFAULT_RULES, Kind, NameRules

_ACRONYM_FILLERS = frozenset({"of", "and", "the", "for", "de", "la", "und"})
MAX_WORDS = 3
"""A person is indexed under at most this many of their last words ("García Márquez")."""
JOINED_LENGTH = 12
"""``j:`` keys keep the first sounds of a long name only: keys stay short."""
MIN_ACRONYM = 3
"""Two-letter acronyms ("HP") would each be shared by thousands of names: not indexed."""


def sound(word: str) -> str:
    """The word's Metaphone code, any leading vowel or Y read as "A" ("Osama"/"Usama",
    "Yeltsin"/"Eltsin"); the word itself where Metaphone has nothing to say (digits, other
    scripts), so a key is never empty."""
    code = jellyfish.metaphone(word) if word.isascii() and word.isalpha() else ""
    if not code:
        return word
    return "A" + code[1:] if code[0] in "AEIOUY" else code


def acronym(name: NormalizedName) -> str | None:
    """What the name would be abbreviated to ("international business machines" -> "ibm"),
    or the name itself if it is one short word; None when it has no sensible acronym."""
    words = [w for w in name.tokens if w not in _ACRONYM_FILLERS]
    if len(words) == 1 and 2 <= len(words[0]) <= 5:
        return words[0]
    if 2 <= len(words) <= 6:
        return "".join(w[0] for w in words)
    return None


def blocking_keys(name: str, kind: Kind, rules: NameRules | None = None) -> frozenset[str]:
    """The keys ``name`` is indexed under (see the module docstring)."""
    rules = rules or DEFAULT_RULES[kind]
    return keys_of(normalize(name, kind, rules), kind, rules)


def keys_of(name: NormalizedName, kind: Kind, rules: NameRules | None = None) -> frozenset[str]:
    """``blocking_keys`` for a name already normalized (the gate normalizes once per write)."""
    rules = rules or DEFAULT_RULES[kind]
    keys = {"x:" + name.key}
    words = name.tokens
    if len(words) == 1 and kind == "person":
        keys.add("m:" + sound(words[0]))
    elif kind == "person" and words:
        first, rest = words[0], words[1:]
        starts = {name[0] for name in (first, *rules.nicknames.get(first, ()))}
        keys.update(
            f"p:{sound(w)}|{start}" for w in rest[-MAX_WORDS:] if len(w) > 1 for start in starts
        )
        if len(first) > 1:
            keys.add(f"p:{sound(first)}|{words[-1][0]}")
        keys.add("j:" + sound(name.joined)[:JOINED_LENGTH])
    elif words:
        distinctive = [w for w in words if w not in rules.generic] or list(words)
        if len(distinctive) == 1:  # a one-word name too: "Acme" meets "Acme Bank" here
            keys.add("o:" + sound(distinctive[0]))
        else:
            one, two = distinctive[:2]
            keys.update((f"o:{sound(one)}|{two[:2]}", f"o:{sound(two)}|{one[:2]}"))
        keys.add("j:" + sound(name.joined)[:JOINED_LENGTH])
    short = acronym(name) if kind == "organisation" else None
    if short and len(short) >= MIN_ACRONYM:
        keys.add("a:" + short)
    return frozenset(keys)
