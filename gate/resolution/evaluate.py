"""Measuring resolution against labelled pairs, and choosing thresholds from them.

Pure (the caller reads the fixture): the bench prints these numbers and a test checks the
shipped thresholds are exactly what ``tune`` picks from the fixture's tuning half, so the
held-out half the bench reports on played no part in choosing them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from writegate.gate.resolution.keys import keys_of, meets, probes_of
from writegate.gate.resolution.normalize import normalize
from writegate.gate.resolution.score import Match, Thresholds, score
from writegate.gate.resolution.vocabulary import Kind

Split = Literal["tune", "holdout"]
Policy = Literal["propose", "auto"]

GRID = tuple(round(0.5 + 0.01 * step, 2) for step in range(51))
"""The thresholds ``tune`` chooses among: 0.50 to 1.00 by 0.01."""
AUTO_MARGIN = 2
"""Grid steps ``auto`` is set above the lowest threshold that merges no tuning non-match:
held-out non-matches may score a little higher than any the tuning half has."""
PROPOSE_BETA = 2.0
"""``propose`` maximizes F-beta: a missed duplicate costs more than one more question."""


class LabelledPair(BaseModel):
    """One line of fixtures/resolution/pairs.jsonl."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    a: str
    b: str
    kind: Kind
    same: bool
    why: str


def parse_pairs(text: str) -> list[LabelledPair]:
    """The pairs of a JSON-lines text (blank lines skipped)."""
    return [LabelledPair.model_validate_json(line) for line in text.splitlines() if line.strip()]


def split_of(pair: LabelledPair) -> Split:
    """A fixed half of the fixture, by a hash of the pair (stable when lines are added)."""
    digest = hashlib.sha256(f"{pair.kind}\x1f{pair.a}\x1f{pair.b}".encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "holdout"


@dataclass(frozen=True, slots=True)
class Scored:
    pair: LabelledPair
    match: Match
    candidate: bool
    """The gate would compare the two names at all (``compared``)."""


def compared(a: str, b: str, kind: Kind) -> bool:
    """Whether the gate compares the two names whichever is written first: the probes of
    each meet a row the other is indexed under."""
    one, two = normalize(a, kind), normalize(b, kind)
    return meets(probes_of(one, kind), keys_of(two, kind)) and meets(
        probes_of(two, kind), keys_of(one, kind)
    )


def score_pairs(pairs: Iterable[LabelledPair]) -> list[Scored]:
    return [
        Scored(pair=p, match=score(p.a, p.b, p.kind), candidate=compared(p.a, p.b, p.kind))
        for p in pairs
    ]


class Counts(BaseModel):
    """A confusion matrix, and what is read from it."""

    model_config = ConfigDict(frozen=True)

    true_pos: int
    false_pos: int
    false_neg: int
    true_neg: int

    @property
    def precision(self) -> float:
        flagged = self.true_pos + self.false_pos
        return self.true_pos / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        same = self.true_pos + self.false_neg
        return self.true_pos / same if same else 1.0

    def f_beta(self, beta: float) -> float:
        p, r = self.precision, self.recall
        return (1 + beta**2) * p * r / (beta**2 * p + r) if p + r else 0.0


def flagged(item: Scored, policy: Policy, threshold: float) -> bool:
    """Whether the gate would propose (or, for ``auto``, merge) this pair at ``threshold``."""
    if not item.candidate or item.match.score < threshold:
        return False
    return policy == "propose" or not item.match.vetoes


def counts(items: Iterable[Scored], policy: Policy, threshold: float) -> Counts:
    tally = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for item in items:
        tally[flagged(item, policy, threshold), item.pair.same] += 1
    return Counts(
        true_pos=tally[True, True],
        false_pos=tally[True, False],
        false_neg=tally[False, True],
        true_neg=tally[False, False],
    )


def candidate_recall(items: Sequence[Scored]) -> float:
    """The share of true pairs the gate compares (``compared``)."""
    same = [item for item in items if item.pair.same]
    return sum(item.candidate for item in same) / len(same) if same else 1.0


def tune(items: Sequence[Scored]) -> Thresholds:
    """The thresholds these pairs call for.

    ``auto``: ``AUTO_MARGIN`` grid steps above the lowest grid value at which ``auto`` merges
    none of these pairs' non-matches. ``propose``: the
    grid value at or below ``auto`` with the best F-beta (``PROPOSE_BETA``); ties go low.
    """
    worst = max(
        (i.match.score for i in items if not i.pair.same and flagged(i, "auto", 0.0)),
        default=0.0,
    )
    safe = [step for step, t in enumerate(GRID) if t > worst]
    auto = GRID[min(safe[0] + AUTO_MARGIN, len(GRID) - 1)] if safe else GRID[-1]
    candidates = [t for t in GRID if t <= auto]
    propose = max(candidates, key=lambda t: (counts(items, "propose", t).f_beta(PROPOSE_BETA), -t))
    return Thresholds(auto=auto, propose=propose)
