"""The words a name is read with, per kind: what is dropped, what qualifies, what is generic.

Kept as data in one typed model (``NameRules``) so a schema can pass its own; the defaults
are deliberately short. A *qualifier* (a legal form, a generation) is stripped from the
name but remembered: "Acme Ltd" and "ACME Limited" agree, "Acme Ltd" and "Acme Inc" (two
legal entities) or "John Smith Jr" and "John Smith Sr" (two people) never auto-resolve.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["person", "organisation"]


class NameRules(BaseModel):
    """How names of one kind are normalized, indexed and compared (all words already folded)."""

    model_config = ConfigDict(frozen=True)

    drop_prefixes: frozenset[str] = frozenset()
    """Leading words that carry no identity ("dr", "the")."""
    drop_suffixes: frozenset[str] = frozenset()
    """Trailing words that carry no identity ("phd")."""
    qualifiers: dict[str, str] = Field(default_factory=dict)
    """Trailing words stripped but compared, each to its canonical form ("limited" -> "ltd")."""
    abbreviations: dict[str, str] = Field(default_factory=dict)
    """Words expanded before anything else ("intl" -> "international")."""
    nicknames: dict[str, frozenset[str]] = Field(default_factory=dict)
    """Given names that may stand for one another ("bill" -> {"william"}); never auto-resolve."""
    generic: frozenset[str] = frozenset()
    """Words that never tell organisations apart ("of", "group"): not blocked on."""
    strict_qualifiers: bool = False
    """Qualifiers must be equal, not merely compatible: "Donald Trump" may be the father of
    "Donald Trump Jr", while "Acme" is just "Acme Ltd" without its legal form."""
    extra_words_count: bool = False
    """A distinctive (non-generic) word only one name has counts against the pair: "Acme
    Bank" is not "Acme". Wrong for people, where a middle name is often just left out."""
    join_initials: bool = False
    """Join runs of single letters into one word ("i b m" -> "ibm"); right for organisations,
    wrong for people ("j r r tolkien" keeps its initials)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _groups(*groups: tuple[str, ...]) -> dict[str, str]:
    """Map every spelling in a group to the group's first spelling."""
    return {word: group[0] for group in groups for word in group}


def _nicknames(*groups: tuple[str, ...]) -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for group in groups:
        for word in group:
            table.setdefault(word, set()).update(w for w in group if w != word)
    return {word: frozenset(others) for word, others in table.items()}


PERSON_RULES = NameRules(
    drop_prefixes=_words("mr mrs ms miss mx dr prof professor sir dame lord lady rev fr hon"),
    drop_suffixes=_words("phd md esq dds mba obe cbe kbe frs"),
    qualifiers=_groups(
        ("jr", "junior"), ("sr", "senior"), ("ii", "2nd"), ("iii", "3rd"), ("iv", "4th")
    ),
    strict_qualifiers=True,
    nicknames=_nicknames(
        ("william", "bill", "will", "billy", "liam"),
        ("robert", "bob", "rob", "bobby"),
        ("richard", "dick", "rick", "rich"),
        ("james", "jim", "jimmy", "jamie"),
        ("john", "jack", "johnny"),
        ("thomas", "tom", "tommy"),
        ("michael", "mike", "mick"),
        ("elizabeth", "liz", "beth", "betty", "eliza", "lisa"),
        ("margaret", "maggie", "meg", "peggy"),
        ("katherine", "catherine", "kate", "kathy", "cathy", "katie"),
        ("alexander", "alex", "sasha"),
        ("edward", "ed", "ted", "eddie", "ned"),
        ("charles", "charlie", "chuck"),
        ("anthony", "tony"),
        ("joseph", "joe", "joey"),
        ("daniel", "dan", "danny"),
        ("christopher", "chris"),
        ("jennifer", "jen", "jenny"),
        ("susan", "sue", "susie"),
        ("patricia", "pat", "patty", "trish"),
        ("steven", "stephen", "steve"),
        ("benjamin", "ben"),
        ("samuel", "sam"),
        ("nicholas", "nick"),
        ("andrew", "andy", "drew"),
        ("david", "dave"),
        ("matthew", "matt"),
        ("timothy", "tim"),
        ("gregory", "greg"),
        ("lawrence", "larry"),
        ("henry", "harry", "hank"),
        ("frederick", "fred", "freddie"),
        ("francis", "frank"),
        ("victoria", "vicky"),
        ("rebecca", "becky"),
        ("deborah", "debbie", "deb"),
        ("dmitry", "dima"),
        ("vladimir", "volodya", "vova"),
    ),
)

ORGANISATION_RULES = NameRules(
    drop_prefixes=frozenset({"the"}),
    qualifiers=_groups(
        ("ltd", "limited"),
        ("inc", "incorporated"),
        ("corp", "corporation"),
        ("co", "company"),
        ("llc",),
        ("llp",),
        ("lp",),
        ("plc",),
        ("pty",),
        ("pte",),
        ("gmbh",),
        ("ag", "aktiengesellschaft"),
        ("kg",),
        ("sa",),
        ("sas",),
        ("sarl",),
        ("srl",),
        ("spa",),
        ("bv",),
        ("nv",),
        ("ab",),
        ("asa",),
        ("as",),
        ("abp",),
        ("oy", "oyj"),
        ("kk",),
        ("se",),
    ),
    abbreviations={
        "intl": "international",
        "natl": "national",
        "univ": "university",
        "mfg": "manufacturing",
        "assn": "association",
        "assoc": "association",
        "bros": "brothers",
        "dept": "department",
        "grp": "group",
        "hldgs": "holdings",
        "svcs": "services",
        "tech": "technology",
        "labs": "laboratories",
        "mt": "mount",
    },
    generic=_words(
        "of and for the de la le du des der die und at in on a an"
        " group holding holdings international global company"
    ),
    extra_words_count=True,
    join_initials=True,
)

DEFAULT_RULES: Mapping[Kind, NameRules] = MappingProxyType(
    {"person": PERSON_RULES, "organisation": ORGANISATION_RULES}
)
