"""The labelled fixture, and the shipped thresholds judged on the half they were not tuned on."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.resolution.make_pairs import CURATED, PAIRS, build, curated
from writegate.gate.resolution import DEFAULT_THRESHOLDS
from writegate.gate.resolution.evaluate import (
    LabelledPair,
    Scored,
    counts,
    flagged,
    parse_pairs,
    score_pairs,
    split_of,
    tune,
)


@pytest.fixture(scope="module")
def pairs() -> list[LabelledPair]:
    return parse_pairs(PAIRS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def scored(pairs: list[LabelledPair]) -> list[Scored]:
    return score_pairs(pairs)


def test_the_committed_fixture_is_what_the_generator_makes() -> None:
    assert PAIRS.read_text(encoding="utf-8") == build()


def test_the_fixture_is_large_varied_and_holds_every_curated_pair(
    pairs: list[LabelledPair],
) -> None:
    assert len(pairs) >= 500
    assert len({(p.a, p.b) for p in pairs}) == len(pairs)
    assert set(curated()) <= set(pairs)
    assert len(curated()) >= 300, CURATED
    mix = Counter((p.kind, p.same, split_of(p)) for p in pairs)
    assert all(n >= 100 for n in mix.values()), mix
    assert len(mix) == 8


def test_the_shipped_thresholds_are_the_ones_the_tuning_half_picks(scored: list[Scored]) -> None:
    assert tune([s for s in scored if split_of(s.pair) == "tune"]) == DEFAULT_THRESHOLDS


def test_auto_merges_no_held_out_non_match(scored: list[Scored]) -> None:
    held_out = [s for s in scored if split_of(s.pair) == "holdout"]
    wrong = [
        s.pair for s in held_out if not s.pair.same and flagged(s, "auto", DEFAULT_THRESHOLDS.auto)
    ]
    assert wrong == []
    merged = counts(held_out, "auto", DEFAULT_THRESHOLDS.auto)
    assert merged.precision == 1.0
    assert merged.true_pos >= 0.5 * (merged.true_pos + merged.false_neg)  # it does merge
