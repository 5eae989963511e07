"""How alike two names are, why, and what may be done about it.

``score`` gives a number in [0, 1] from a few rapidfuzz measures, names the rule that set it,
and lists *vetoes*: reasons the pair may be proposed but never auto-resolved, whatever the
number (a short name or an acronym, two different legal forms or generations, an initial or
a nickname standing for a name, a word one side lacks). ``decide`` turns a match and a
policy's thresholds into "same", "possible" or "different".
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from rapidfuzz import fuzz
from rapidfuzz.distance import JaroWinkler

from writegate.gate.resolution.keys import acronym
from writegate.gate.resolution.normalize import NormalizedName, normalize
from writegate.gate.resolution.vetoes import SHORT_WORD, VETO_REASONS, Veto
from writegate.gate.resolution.vocabulary import DEFAULT_RULES, Kind, NameRules

Rule = Literal["exact_normalized", "joined", "acronym", "fuzzy"]
Verdict = Literal["same", "possible", "different"]

JOINED_SCORE = 0.99
"""The same letters, spaced differently ("Black Rock"/"BlackRock")."""
FUZZY_CEILING = 0.97
"""The best a *fuzzy* match can score. A letter's difference is just what tells "Hoffmann"
from "Hoffman" or "Louis" from "Louise", so letter-level likeness alone never scores as high
as names that normalization (1.0) or spacing (``JOINED_SCORE``) makes equal."""
ACRONYM_SCORE = 0.9
"""One name is the other's initials ("IBM"/"International Business Machines")."""
WEIGHTS = {"monge_elkan": 0.35, "worst_word": 0.35, "ratio": 0.15, "jaro_winkler": 0.15}
"""How the measures add up to a fuzzy score (see ``_fuzzy``)."""


class Match(BaseModel):
    """The score of one pair, the rule that set it, its measures and its vetoes."""

    model_config = ConfigDict(frozen=True)

    score: float = Field(ge=0.0, le=1.0)
    rule: Rule
    measures: dict[str, float]
    vetoes: tuple[Veto, ...]
    reasons: tuple[str, ...]
    """One sentence per rule and veto, for an agent or a reviewer to read."""


class Thresholds(BaseModel):
    """A resolution policy's cut-offs: ``auto`` merges, ``propose`` asks."""

    model_config = ConfigDict(frozen=True)

    auto: float = Field(ge=0.0, le=1.0)
    propose: float = Field(ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if self.propose > self.auto:
            raise ValueError("propose must not exceed auto")
        return self


DEFAULT_THRESHOLDS = Thresholds(auto=0.98, propose=0.70)
"""Tuned on the fixture's tuning half only (see fixtures/resolution/README.md)."""


def decide(match: Match, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> Verdict:
    """ "same" only at or above ``auto`` with no veto; "possible" at or above ``propose``."""
    if match.score >= thresholds.auto and not match.vetoes:
        return "same"
    return "possible" if match.score >= thresholds.propose else "different"


def score(a: str, b: str, kind: Kind, rules: NameRules | None = None) -> Match:
    """Score two raw names of one kind."""
    rules = rules or DEFAULT_RULES[kind]
    return score_normalized(normalize(a, kind, rules), normalize(b, kind, rules), kind, rules)


def score_normalized(
    a: NormalizedName, b: NormalizedName, kind: Kind, rules: NameRules | None = None
) -> Match:
    """Score two names already normalized (the gate normalizes a write's name once)."""
    rules = rules or DEFAULT_RULES[kind]
    vetoes: list[Veto] = []
    if _short(a) or _short(b):
        vetoes.append("short_name")
    if a.acronym or b.acronym:
        vetoes.append("acronym")
    if kind == "person" and min(len(a.tokens), len(b.tokens)) == 1:
        vetoes.append("single_word")
    if _qualifiers_conflict(a.qualifiers, b.qualifiers, rules.strict_qualifiers):
        vetoes.append("qualifier_conflict")
    if codes_differ(a, b):
        vetoes.append("codes_differ")
    measures, word_vetoes = _measures(a, b, rules)
    rule: Rule
    if a.key == b.key:
        rule, value, why = "exact_normalized", 1.0, f"equal once normalized: {a.key!r}"
    elif a.joined == b.joined:
        rule, value, why = "joined", JOINED_SCORE, f"the same letters spaced apart: {a.joined!r}"
    elif _is_acronym_of(a, b) or _is_acronym_of(b, a):
        rule, value, why = "acronym", ACRONYM_SCORE, "one name is the other's initials"
        vetoes.append("acronym")
    else:
        rule, value = "fuzzy", _fuzzy(measures)
        why = "weighted " + ", ".join(f"{name} {measures[name]:.2f}" for name in WEIGHTS)
        vetoes.extend(word_vetoes)
    unique = tuple(dict.fromkeys(vetoes))
    reasons = (why, *(f"never auto-resolves: {VETO_REASONS[v]}" for v in unique))
    return Match(score=value, rule=rule, measures=measures, vetoes=unique, reasons=reasons)


def score_value(
    a: NormalizedName, b: NormalizedName, kind: Kind, rules: NameRules | None = None
) -> float:
    """``score_normalized(a, b, kind, rules).score`` without the vetoes and reasons: the
    gate scores every candidate this way and explains only those that reach a threshold."""
    if a.key == b.key:
        return 1.0
    if a.joined == b.joined:
        return JOINED_SCORE
    if _is_acronym_of(a, b) or _is_acronym_of(b, a):
        return ACRONYM_SCORE
    return _fuzzy(_measures(a, b, rules or DEFAULT_RULES[kind])[0])


def codes_differ(a: NormalizedName, b: NormalizedName) -> bool:
    """Whether the words holding digits differ, or one name has such a word the other
    lacks: "fs11"/"fs10", "ln22a450"/"ln22a451", "aw390bl"/"aw390wh". A letter in such a
    word identifies as much as a digit, so any difference counts (a code spelled apart,
    "lp 12"/"lp12", is asked about too: it can only cost a question, never a merge)."""
    return sorted(_codes(a)) != sorted(_codes(b))


def _codes(name: NormalizedName) -> list[str]:
    return [word for word in name.tokens if any(c.isdigit() for c in word)]


def _short(name: NormalizedName) -> bool:
    return max(map(len, name.tokens), default=0) <= SHORT_WORD


def _qualifiers_conflict(a: frozenset[str], b: frozenset[str], strict: bool) -> bool:
    if strict:
        return a != b
    return bool(a and b and not a & b)


def _fuzzy(measures: dict[str, float]) -> float:
    return round(FUZZY_CEILING * sum(w * measures[name] for name, w in WEIGHTS.items()), 4)


def _is_acronym_of(short: NormalizedName, long: NormalizedName) -> bool:
    return len(short.tokens) == 1 and len(long.tokens) > 1 and acronym(long) == short.joined


def _measures(
    a: NormalizedName, b: NormalizedName, rules: NameRules
) -> tuple[dict[str, float], list[Veto]]:
    """The measures of the pair, and the word-level vetoes its best word alignment raised.

    ``monge_elkan`` is the mean, over each name's words, of the best Jaro-Winkler match in the
    other name (taking the lower of the two directions, so an extra word costs);
    ``worst_word`` is the weakest of those best matches ("John"/"Jane" in an otherwise equal
    name): of every distinctive word where ``rules.extra_words_count`` ("Acme"/"Acme Bank"),
    else of the shorter name's words only (a left-out middle name costs in ``monge_elkan``
    and vetoes auto instead). An initial matches a word it begins, a nickname its name.
    """
    vetoes: list[Veto] = []
    rows = [[_word_similarity(x, y, rules, vetoes) for y in b.tokens] for x in a.tokens]
    if len(a.tokens) != len(b.tokens):
        vetoes.append("word_count")
    ratio = fuzz.ratio(a.text, b.text) / 100
    whole = JaroWinkler.similarity(a.text, b.text)
    return _aggregate(a.tokens, b.tokens, rows, rules, ratio, whole), vetoes


def _aggregate(
    a: tuple[str, ...],
    b: tuple[str, ...],
    rows: list[list[float]],
    rules: NameRules,
    ratio: float,
    whole: float,
) -> dict[str, float]:
    """The measures from the word similarities (``rows``: a's words by b's) and the whole
    texts' ratio and Jaro-Winkler similarity."""
    forward = [max(row, default=0.0) for row in rows]
    backward = [max(col) for col in zip(*rows, strict=True)] if rows else [0.0] * len(b)
    if rules.extra_words_count:
        pairs = [*zip(a, forward, strict=True), *zip(b, backward, strict=True)]
        counted = [best for word, best in pairs if word not in rules.generic]
    elif len(forward) == len(backward):
        counted = forward + backward
    else:
        counted = forward if len(forward) < len(backward) else backward
    measures = {
        "monge_elkan": min(_mean(forward), _mean(backward)),
        "worst_word": min(counted, default=0.0),
        "ratio": ratio,
        "jaro_winkler": whole,
    }
    return {name: round(value, 4) for name, value in measures.items()}


def score_values(
    a: NormalizedName, texts: list[str], kind: Kind, rules: NameRules | None = None
) -> list[float]:
    """``score_value`` of ``a`` against each normal text (as the index keeps it), equal to
    it to the last digit, with less done a candidate: no normal form built for it, no vetoes
    or measures kept, the measures added up inline (``_measured``)."""
    rules = rules or DEFAULT_RULES[kind]
    mine = _mine(a, rules)
    values: list[float] = []
    for text in texts:
        split = text.split()
        special = _special_value(a, split)
        if special is not None:
            values.append(special)
        else:
            values.append(_rounded(_measured(a, mine, split, text, rules)))
    return values


MARGIN = 1e-3
"""How near the threshold ``below``'s unrounded score must be for it to be rounded as
``score_value`` rounds it: each measure and the score are rounded to 4 digits, which moves
a score by less than 1e-4 in all."""


def below(
    a: NormalizedName,
    texts: list[str],
    threshold: float,
    kind: Kind,
    rules: NameRules | None = None,
) -> list[bool]:
    """Whether each text's ``score_values`` value is below ``threshold`` — the same answer
    for every text, and all the gate asks of a candidate before it explains it: a fuzzy
    score is rounded only within ``MARGIN`` of the threshold (most candidates of a creating
    write are far below it, and rounding to 4 digits is a third of their scoring)."""
    rules = rules or DEFAULT_RULES[kind]
    mine = _mine(a, rules)
    answers: list[bool] = []
    for text in texts:
        split = text.split()
        special = _special_value(a, split)
        if special is not None:
            answers.append(special < threshold)
            continue
        measures = _measured(a, mine, split, text, rules)
        me, worst, ratio, whole = measures
        estimate = FUZZY_CEILING * (_ME * me + _WORST * worst + _RATIO * ratio + _WHOLE * whole)
        if estimate < threshold - MARGIN:
            answers.append(True)
        elif estimate >= threshold + MARGIN:
            answers.append(False)
        else:
            answers.append(_rounded(measures) < threshold)
    return answers


_ME, _WORST, _RATIO, _WHOLE = (
    WEIGHTS[k] for k in ("monge_elkan", "worst_word", "ratio", "jaro_winkler")
)
Mine = list[tuple[str, bool, frozenset[str]]]


def _mine(a: NormalizedName, rules: NameRules) -> Mine:
    """Each of a's words, whether it is an initial, and its nicknames: read once a write."""
    return [(x, len(x) == 1, rules.nicknames.get(x, frozenset())) for x in a.tokens]


def _special_value(a: NormalizedName, split: list[str]) -> float | None:
    """The value of a rule other than the fuzzy one, as ``score_value`` tries them."""
    if " ".join(sorted(split)) == a.key:
        return 1.0
    if "".join(split) == a.joined:
        return JOINED_SCORE
    if (len(split) == 1 or len(a.tokens) == 1) and _either_acronym(a, split):
        return ACRONYM_SCORE
    return None


def _rounded(measures: tuple[float, float, float, float]) -> float:
    """``_fuzzy`` of the measures rounded as ``_aggregate`` rounds them: the same sums in the
    same order, so the same value to the last digit."""
    me, worst, ratio, whole = measures
    total = (
        _ME * round(me, 4)
        + _WORST * round(worst, 4)
        + _RATIO * round(ratio, 4)
        + _WHOLE * round(whole, 4)
    )
    return round(FUZZY_CEILING * total, 4)


def _measured(
    a: NormalizedName, mine: Mine, split: list[str], text: str, rules: NameRules
) -> tuple[float, float, float, float]:
    """``_aggregate``'s measures of one candidate, unrounded, without a call a word pair."""
    similarity = JaroWinkler.similarity
    rows = [
        [
            1.0
            if x == y
            else (
                (1.0 if x[0] == y[0] else 0.0)
                if short or len(y) == 1
                else (1.0 if y in nicknames else similarity(x, y))
            )
            for y in split
        ]
        for x, short, nicknames in mine
    ]
    forward = [max(row, default=0.0) for row in rows]
    backward = [max(col) for col in zip(*rows, strict=True)] if rows else [0.0] * len(split)
    if rules.extra_words_count:
        pairs = [*zip(a.tokens, forward, strict=True), *zip(split, backward, strict=True)]
        counted = [best for word, best in pairs if word not in rules.generic]
    elif len(forward) == len(backward):
        counted = forward + backward
    else:
        counted = forward if len(forward) < len(backward) else backward
    return (
        min(_mean(forward), _mean(backward)),
        min(counted, default=0.0),
        fuzz.ratio(a.text, text) / 100,
        similarity(a.text, text),
    )


def _either_acronym(a: NormalizedName, words: list[str]) -> bool:
    b = NormalizedName.of(words, set(), acronym=False)
    return _is_acronym_of(a, b) or _is_acronym_of(b, a)


def _similarity(x: str, y: str, rules: NameRules) -> float:
    """``_word_similarity`` without the vetoes (a bare value has none)."""
    if x == y:
        return 1.0
    if len(x) == 1 or len(y) == 1:
        return 1.0 if x[0] == y[0] else 0.0
    if y in rules.nicknames.get(x, ()):
        return 1.0
    return JaroWinkler.similarity(x, y)


def _word_similarity(x: str, y: str, rules: NameRules, vetoes: list[Veto]) -> float:
    if x == y:
        return 1.0
    if len(x) == 1 or len(y) == 1:
        if x[0] == y[0]:
            vetoes.append("initials")
            return 1.0
        return 0.0
    if y in rules.nicknames.get(x, ()):
        vetoes.append("nickname")
        return 1.0
    return JaroWinkler.similarity(x, y)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
