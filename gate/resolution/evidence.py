"""Evidence beyond the name, weighed the Fellegi-Sunter way (as splink does).

Each declared field of a candidate pair *agrees*, *nearly* agrees (a typo, a day and month
swapped or one part of a date another, a spelling), *disagrees* or is *missing* on either
side. An outcome adds its match weight ``log2(m / u)``: ``m`` is how often a true duplicate
shows that outcome, a constant per kind of comparison (``M``: how often records of one thing
differ by kind of field, not fitted to any data set); ``u`` how often two different things
do, read from the graph's own value frequencies (term-frequency adjustment: an agreeing rare
value is strong, a common one weak). A missing value adds nothing. The name is weighed the
same way (``name_weight``), and the sum with the prior odds of one pair among the label's
nodes is the posterior probability the policy's thresholds apply to (``posterior``).

Pure: the gate (``gate.resolution.weighing``) reads the counts and the candidates' values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict
from rapidfuzz.distance import OSA, JaroWinkler, Levenshtein

from writegate.gate.resolution.keys import ACRONYM_FILLERS
from writegate.gate.resolution.normalize import fold

if TYPE_CHECKING:  # the schema's module imports this package's normal forms
    from writegate.gate.schema.document import EvidenceDoc

Outcome = Literal["agree", "near", "disagree", "missing"]
NameLevel = Literal["equal", "close", "like", "far", "different"]

M: dict[str, dict[Outcome, float]] = {
    "exact": {"agree": 0.92, "near": 0.05, "disagree": 0.03},
    "date": {"agree": 0.90, "near": 0.07, "disagree": 0.03},
    "similar": {"agree": 0.85, "near": 0.10, "disagree": 0.05},
    "numeric": {"agree": 0.90, "near": 0.05, "disagree": 0.05},
    "geo": {"agree": 0.90, "near": 0.07, "disagree": 0.03},
    "identity": {"agree": 0.90, "near": 0.0, "disagree": 0.10},
}
"""How often two records of one thing show each outcome, by kind of comparison: typed dates
and codes are rarely wrong, places are spelled several ways, a second phone number is common."""
NEIGHBOURS = {"exact": 30, "date": 20, "similar": 5, "numeric": 10, "geo": 30}
"""About how many distinct values count as near one value (a code's typo, a digit's typo in
a date, a spelling of a place): a near miss's ``u`` is this many over the population. The counts
index equal values only, so this one is a documented constant, not a frequency."""
MIN_POPULATION = 100
"""Frequencies from fewer nodes are read as from this many: a value seen once among five
nodes is not one in five of the world's."""
NAME_M: dict[NameLevel, float] = {
    "equal": 0.60,
    "close": 0.22,
    "like": 0.08,
    "far": 0.04,
    "different": 0.06,
}
"""How often two records of one thing have names at each level (equal once normalized;
name score at least 0.90; 0.80; the label's ``propose`` threshold; below it)."""
NAME_NEIGHBOURS: dict[NameLevel, int] = {"close": 3, "like": 20, "far": 100}
"""About how many other names lie at each level from one: a level's ``u`` over the population
(an equal name's ``u`` is its own frequency)."""
SIMILAR = 0.90
"""A ``similar`` field nearly agrees at this Jaro-Winkler similarity or more."""
NEAR_NUMERIC = 10
"""A ``numeric`` (or ``geo``) field nearly agrees within this many tolerances: a place
geocoded from another entrance, a price before a discount. At tolerance 0 a number agrees
only with itself: a year or a count one off names another thing, not a typo."""
GEO_TOLERANCE = 100.0
"""The metres a ``geo`` field agrees within unless it says (``tolerance_metres``)."""
_EARTH_METRES = 6_371_008.8
_METRES_A_DEGREE = math.pi * _EARTH_METRES / 180
MIN_TYPO = 4
"""An ``exact`` value this long or longer is nearly agreed with by a one-character typo;
a shorter one ("nsw"/"vic", "B"/"C") disagrees."""
_MAX_U = 0.5
_WORDS = re.compile(r"[^\W_]+")


class Contribution(BaseModel):
    """What one field said of a pair: its outcome and its weight in bits."""

    model_config = ConfigDict(frozen=True)

    field: str
    outcome: Outcome
    weight: float

    def sentence(self) -> str:
        said = {"agree": "agrees", "near": "nearly agrees", "disagree": "disagrees"}
        return f"{self.field} {said.get(self.outcome, 'is missing')} ({self.weight:+.1f})"


def _text(value: object) -> str:
    return " ".join(fold(str(value)).replace("|", " ").split())


def _date(value: object) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if (parts := _date_parts(value)) is None:
        return None
    try:
        return date(*map(int, parts))
    except ValueError:
        return None


def _date_parts(value: object) -> tuple[str, str, str] | None:
    """A date's year, month and day as written, even when it is no date ("1994-11-71", a
    month 13: a typo of one): what two dates are compared by, part by part."""
    if isinstance(value, date):
        value = value.isoformat()
    digits = re.sub(r"\D", "", str(value))
    return (digits[:4], digits[4:6], digits[6:]) if len(digits) == 8 else None


def raw_value(field: str, doc: EvidenceDoc, properties: Mapping[str, Any]) -> object:
    """The field's value in a node's properties: its own, or its two coordinates."""
    if doc.latitude is not None and doc.longitude is not None:
        lat, lng = properties.get(doc.latitude), properties.get(doc.longitude)
        return None if lat is None or lng is None else (lat, lng)
    return properties.get(field)


def _place(value: object) -> tuple[float, float] | None:
    """A [lat, lng] pair, a "lat,lng" text or (lat, lng), as degrees (None: not a place)."""
    parts = value.split(",") if isinstance(value, str) else value
    if not isinstance(parts, (list, tuple)) or len(parts) != 2:
        return None
    try:
        lat, lng = float(str(parts[0])), float(str(parts[1]))
    except ValueError:
        return None
    return (lat, lng) if abs(lat) <= 90 and abs(lng) <= 180 else None


def metres_apart(one: tuple[float, float], two: tuple[float, float]) -> float:
    """The great-circle distance (haversine) between two places."""
    (lat1, lng1), (lat2, lng2) = (tuple(map(math.radians, p)) for p in (one, two))
    h = math.sin((lat2 - lat1) / 2) ** 2
    h += math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    return 2 * _EARTH_METRES * math.asin(min(1.0, math.sqrt(h)))


def _cell(place: tuple[float, float], metres: float) -> str:
    """The square of side ``metres`` (north-south) a place is counted in."""
    side = metres / _METRES_A_DEGREE
    return f"{math.floor(place[0] / side)}:{math.floor(place[1] / side)}"


def value_key(doc: EvidenceDoc, value: object) -> str | None:
    """The value as it is compared and counted (None: missing)."""
    if value is None or value == "":
        return None
    if doc.compare == "geo":
        place = _place(value)
        return _cell(place, doc.tolerance_metres or GEO_TOLERANCE) if place else None
    if isinstance(value, date):
        return (value.date() if isinstance(value, datetime) else value).isoformat()
    return _value_key(doc.compare, doc.tolerance, str(value))


@lru_cache(maxsize=65_536)
def _value_key(kind: str, tolerance: float, value: str) -> str | None:
    if kind == "numeric":
        try:
            number = float(value)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        return str(round(number / tolerance)) if tolerance else repr(number)
    if kind == "date" and (day := _date(value)) is not None:
        return day.isoformat()
    return _text(value) or None


def compare(doc: EvidenceDoc, a: object, b: object) -> Outcome:
    """How two raw values of a declared field compare."""
    one, two = value_key(doc, a), value_key(doc, b)
    if one is None or two is None:
        return "missing"
    if doc.compare == "geo":
        tolerance = doc.tolerance_metres or GEO_TOLERANCE
        apart = metres_apart(_place(a) or (0.0, 0.0), _place(b) or (0.0, 0.0))
        if apart <= tolerance:
            return "agree"
        return "near" if apart <= NEAR_NUMERIC * tolerance else "disagree"
    if doc.compare == "numeric":
        distance = abs(float(str(a)) - float(str(b)))
        if distance <= doc.tolerance:
            return "agree"  # at tolerance 0 (a year, a count) another number is another thing
        return "near" if distance <= NEAR_NUMERIC * doc.tolerance else "disagree"
    if doc.compare == "date" and (parts := _date_parts(a)) and (theirs := _date_parts(b)):
        first, second = _date(a), _date(b)
        if first is not None and second is not None:
            if abs((first - second).days) <= doc.tolerance_days:
                return "agree"
        elif parts == theirs:
            return "agree"
        typo = OSA.distance("".join(parts), "".join(theirs)) <= 1  # a digit wrong, two swapped
        one_part = sum(x == y for x, y in zip(parts, theirs, strict=True)) == 2  # a day mistyped
        swapped = (parts[0], parts[2], parts[1]) == theirs  # day and month the other way round
        return "near" if typo or one_part or swapped else "disagree"
    if one == two:
        return "agree"
    if doc.compare == "exact":  # a typo (one character wrong, or two swapped) is a near miss
        return (
            "near"
            if min(len(one), len(two)) >= MIN_TYPO and OSA.distance(one, two) <= 1
            else "disagree"
        )
    sorted_one, sorted_two = _in_order(one), _in_order(two)
    if sorted_one == sorted_two:  # the same words in another order: a list, a surname first
        return "agree"
    close = JaroWinkler.similarity(one, two) >= SIMILAR or Levenshtein.distance(one, two) <= 1
    close = close or JaroWinkler.similarity(sorted_one, sorted_two) >= SIMILAR
    return "near" if close or _initials_of(one, two) or _initials_of(two, one) else "disagree"


def _in_order(text: str) -> str:
    """A text's words sorted: how a ``similar`` value is compared besides as written, so a
    list of names or a name given surname first compares by its words, not their order."""
    return " ".join(sorted(_WORDS.findall(text)))


def _initials_of(short: str, long: str) -> bool:
    """One value is the other's initials: "vldb"/"very large data bases", "nyc"/"new york
    city" — how places and venues are abbreviated ("of", "the"… may be left out)."""
    words = long.split()
    if " " in short or len(words) < 2 or len(short) < 2:
        return False
    every = "".join(w[0] for w in words)
    return short in (every, "".join(w[0] for w in words if w not in ACRONYM_FILLERS))


def field_weight(kind: str, outcome: Outcome, count: int, total: int) -> float:
    """The outcome's weight: ``log2(m/u)`` agreeing (``u`` the written value's share of the
    nodes holding the field), nearly (``NEIGHBOURS``), ``log2(m/(1-u))`` disagreeing."""
    if outcome == "missing":
        return 0.0
    population = max(total, MIN_POPULATION)
    u_agree = min(max(count, 1) / population, _MAX_U)
    u_near = min(NEIGHBOURS.get(kind, 0) / population, _MAX_U)
    m = M[kind][outcome]
    if outcome == "agree":
        return math.log2(m / u_agree)
    if outcome == "near":
        return math.log2(m / u_near) if m and u_near else 0.0
    return math.log2(m / max(1.0 - u_agree - u_near, 0.01))


def name_level(rule: str, value: float, propose: float) -> NameLevel:
    """The level of a name score (``score.Match``)."""
    if rule in ("exact_normalized", "joined"):
        return "equal"
    if value >= SIMILAR:
        return "close"
    if value >= 0.80:
        return "like"
    return "far" if value >= propose else "different"


def name_weight(level: NameLevel, count: int, population: int) -> float:
    """The name's weight: an equal name's ``u`` is its frequency among the label's nodes."""
    people = max(population, MIN_POPULATION)
    if level == "different":
        return math.log2(NAME_M[level])
    seen = max(count, 1) if level == "equal" else NAME_NEIGHBOURS[level]
    return math.log2(NAME_M[level] * people / seen)


def prior_weight(population: int) -> float:
    """The prior odds, in bits, that a new node duplicates one given node of ``population``."""
    return -math.log2(max(population, MIN_POPULATION))


def posterior(weight: float) -> float:
    """The probability of a total weight (bits of odds)."""
    if weight > 60:
        return 1.0
    return 1.0 / (1.0 + math.pow(2.0, -weight))
