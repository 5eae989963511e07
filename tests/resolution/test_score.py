"""Scores and decisions: named hard cases, the short-name and acronym guard, the thresholds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.resolution.make_pairs import PAIRS
from writegate.gate.resolution import (
    DEFAULT_THRESHOLDS,
    Kind,
    Thresholds,
    Verdict,
    decide,
    score,
)
from writegate.gate.resolution.evaluate import parse_pairs
from writegate.gate.resolution.normalize import normalize
from writegate.gate.resolution.score import below, score_normalized, score_value, score_values


def verdict(a: str, b: str, kind: Kind) -> Verdict:
    return decide(score(a, b, kind))


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("Alan Turing", "alan  turing", "person"),
        ("Alan Turing", "Turing, Alan", "person"),
        ("José Martí", "Jose Marti", "person"),
        ("Dr. Richard Feynman", "Richard Feynman", "person"),
        ("Martin Luther King Jr.", "Martin Luther King, Jr.", "person"),
        ("Acme Ltd", "Acme Limited", "organisation"),
        ("Microsoft Corporation", "Microsoft", "organisation"),
        ("Nestlé S.A.", "Nestle SA", "organisation"),
        ("Johnson & Johnson", "Johnson and Johnson", "organisation"),
        ("BlackRock", "Black Rock, Inc.", "organisation"),
    ],
)
def test_auto_resolves_what_normalization_makes_equal(a: str, b: str, kind: Kind) -> None:
    assert verdict(a, b, kind) == "same"


@pytest.mark.parametrize(
    ("a", "b", "kind", "veto"),
    [
        ("IBM", "IBN", "organisation", "acronym"),
        ("IBM", "I.B.M.", "organisation", "acronym"),
        ("Al", "Ali", "person", "short_name"),
        ("Ed Lee", "Ed Li", "person", "short_name"),
        ("IBM", "International Business Machines", "organisation", "acronym"),
        ("Acme Ltd", "Acme Inc", "organisation", "qualifier_conflict"),
        ("Apple Inc.", "Apple Corps", "organisation", "word_count"),
        ("John Smith Jr.", "John Smith Sr.", "person", "qualifier_conflict"),
        ("Donald Trump", "Donald Trump Jr.", "person", "qualifier_conflict"),
        ("Alan Turing", "A. Turing", "person", "initials"),
        ("William Gates", "Bill Gates", "person", "nickname"),
        ("George W. Bush", "George Bush", "person", "word_count"),
        ("Madonna", "madonna", "person", "single_word"),
    ],
)
def test_never_auto_resolves(a: str, b: str, kind: Kind, veto: str) -> None:
    match = score(a, b, kind)
    assert decide(match, Thresholds(auto=0.0, propose=0.0)) != "same"
    assert veto in match.vetoes
    assert any("never auto-resolves" in reason for reason in match.reasons)


@pytest.mark.parametrize(
    ("a", "b", "kind", "expected"),
    [
        ("Acme Corp", "Acme Bank", "organisation", "different"),
        ("General Motors", "General Mills", "organisation", "possible"),  # one word apart: asked
        ("Maria Garcia", "Jose Garcia", "person", "different"),
        ("Marie Curie", "Pierre Curie", "person", "different"),
        ("John Smith", "John Smyth", "person", "possible"),  # or a typo: someone must say
        ("Grace Hopper", "Grace Hoper", "person", "possible"),
        ("Fyodor Dostoevsky", "Fyodor Dostoyevsky", "person", "possible"),
        ("IBM", "International Business Machines", "organisation", "possible"),
    ],
)
def test_named_hard_cases(a: str, b: str, kind: Kind, expected: Verdict) -> None:
    assert verdict(a, b, kind) == expected


def test_a_match_explains_itself() -> None:
    match = score("Alan Turing", "A. Turing", "person")
    assert match.rule == "fuzzy"
    assert set(match.measures) == {"monge_elkan", "worst_word", "ratio", "jaro_winkler"}
    assert match.reasons[0].startswith("weighted monge_elkan")
    exact = score("Alan Turing", "TURING, Alan", "person")
    assert (exact.rule, exact.score, exact.vetoes) == ("exact_normalized", 1.0, ())


names = st.text(st.characters(categories=["L", "Zs", "Po"]), max_size=30)


@given(names, names, st.sampled_from(["person", "organisation"]))
def test_scores_are_bounded_and_symmetric(a: str, b: str, kind: Kind) -> None:
    one, two = score(a, b, kind), score(b, a, kind)
    assert 0.0 <= one.score <= 1.0
    assert (one.score, one.rule, set(one.vetoes)) == (two.score, two.rule, set(two.vetoes))


def test_thresholds_are_ordered() -> None:
    assert DEFAULT_THRESHOLDS.propose <= DEFAULT_THRESHOLDS.auto
    with pytest.raises(ValidationError):
        Thresholds(auto=0.8, propose=0.9)


@given(names, names, st.sampled_from(["person", "organisation"]))
def test_the_bare_value_is_the_scores_value(a: str, b: str, kind: Kind) -> None:
    """The gate scores candidates by ``score_value`` and explains only those it keeps."""
    x, y = normalize(a, kind), normalize(b, kind)
    assert score_value(x, y, kind) == score_normalized(x, y, kind).score


def test_the_bare_value_agrees_on_the_labelled_fixture() -> None:
    for pair in parse_pairs(PAIRS.read_text(encoding="utf-8")):
        x, y = normalize(pair.a, pair.kind), normalize(pair.b, pair.kind)
        assert score_value(x, y, pair.kind) == score_normalized(x, y, pair.kind).score, pair


@given(names, st.lists(names, max_size=6), st.sampled_from(["person", "organisation"]))
def test_scoring_many_texts_at_once_gives_each_ones_value(
    a: str, others: list[str], kind: Kind
) -> None:
    """The gate scores a write's candidates in one call, from the normal texts it indexes."""
    x, ys = normalize(a, kind), [normalize(b, kind) for b in others]
    assert score_values(x, [y.text for y in ys], kind) == [score_value(x, y, kind) for y in ys]


def test_scoring_at_once_agrees_on_the_labelled_fixture() -> None:
    pairs = parse_pairs(PAIRS.read_text(encoding="utf-8"))
    for kind in ("person", "organisation"):
        texts = [normalize(pair.b, kind).text for pair in pairs if pair.kind == kind]
        for pair in [pair for pair in pairs if pair.kind == kind][:50]:
            x = normalize(pair.a, kind)
            expected = [score_value(x, normalize(b, kind), kind) for b in texts]
            assert score_values(x, texts, kind) == expected, pair


@given(
    names,
    st.lists(names, max_size=6),
    st.sampled_from(["person", "organisation"]),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_telling_candidates_below_a_threshold_answers_as_their_values_do(
    a: str, others: list[str], kind: Kind, threshold: float
) -> None:
    """The gate asks only which candidates are below ``propose``; it rounds only near it."""
    x = normalize(a, kind)
    texts = [normalize(b, kind).text for b in others]
    values = score_values(x, texts, kind)
    for cut in [threshold, *values]:  # a value itself: the boundary, where rounding decides
        assert below(x, texts, cut, kind) == [value < cut for value in values]


def test_telling_candidates_below_agrees_on_the_labelled_fixture() -> None:
    pairs = parse_pairs(PAIRS.read_text(encoding="utf-8"))
    for kind in ("person", "organisation"):
        texts = [normalize(pair.b, kind).text for pair in pairs if pair.kind == kind]
        for pair in [pair for pair in pairs if pair.kind == kind][:50]:
            x = normalize(pair.a, kind)
            values = score_values(x, texts, kind)
            for cut in (0.5, DEFAULT_THRESHOLDS.propose, 0.9, DEFAULT_THRESHOLDS.auto):
                assert below(x, texts, cut, kind) == [v < cut for v in values], (pair, cut)
