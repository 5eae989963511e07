"""The formula providers of seed 000's appendix (issue 12): each reproduces its published
table, loads by entry-point name, is recorded in provenance, and is what MCP publishes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA, person
from writegate.gate import Gate, Rejected, WriteNodeResult, load_formula_provider
from writegate.gate.formula import FormulaProvider, compute_confidence
from writegate.gate.formulas import (
    AdmiraltyFormulaProvider,
    FlatFormulaProvider,
    StixFormulaProvider,
    decayed,
)
from writegate.gate.server.app import WritegateServer

# -- Admiralty Code -----------------------------------------------------------------------


# Credibility digit: STIX 2.1 Part 1, Appendix A, "Admiralty Credibility Scale to STIX
# Confidence" (1 -> 90, 2 -> 70, 3 -> 50, 4 -> 30, 5 -> 10), /100; source letter: the
# documented multiplier A 1.0, B 0.8, C 0.6, D 0.4, E 0.2; F as C, 6 as 3.
@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("A1", 1.0 * 0.90),
        ("A5", 1.0 * 0.10),
        ("B2", 0.8 * 0.70),  # 0.56
        ("C3", 0.6 * 0.50),  # 0.30
        ("D4", 0.4 * 0.30),  # 0.12
        ("E5", 0.2 * 0.10),  # 0.02
        ("E1", 0.2 * 0.90),  # an unreliable source can carry confirmed information
        ("F2", 0.6 * 0.70),  # F "cannot be judged" as C
        ("B6", 0.8 * 0.50),  # 6 "cannot be judged" as 3
        ("F6", 0.6 * 0.50),
    ],
)
def test_admiralty_codes(code: str, expected: float) -> None:
    assert AdmiraltyFormulaProvider().compute(0.5, code) == pytest.approx(expected)


def test_admiralty_offers_all_36_codes_and_ignores_reliability() -> None:
    provider = AdmiraltyFormulaProvider()
    methods = provider.allowed_extraction_methods()
    assert methods == {f"{letter}{digit}" for letter in "ABCDEF" for digit in "123456"}
    assert provider.compute(0.0, "B2") == provider.compute(1.0, "B2")


def test_admiralty_never_rewards_a_worse_grade() -> None:
    provider = AdmiraltyFormulaProvider()
    for letter in "ABCDE":
        row = [provider.compute(0.5, f"{letter}{digit}") for digit in "12345"]
        assert row == sorted(row, reverse=True)
    for digit in "12345":
        column = [provider.compute(0.5, f"{letter}{digit}") for letter in "ABCDE"]
        assert column == sorted(column, reverse=True)


# -- STIX 2.1 confidence scales -----------------------------------------------------------


# Each row is STIX 2.1 Part 1, Appendix A "Confidence Scales", "<scale> to STIX Confidence",
# the STIX value divided by 100.
@pytest.mark.parametrize(
    ("method", "expected"),
    [
        # None / Low / Med / High: None 0, Low 15, Med 50, High 85
        ("nlmh:none", 0.0),
        ("nlmh:low", 0.15),
        ("nlmh:med", 0.50),
        ("nlmh:high", 0.85),
        # 0-10: n -> n * 10
        ("zero_ten:0", 0.0),
        ("zero_ten:3", 0.30),
        ("zero_ten:10", 1.0),
        # Admiralty Credibility: 5 -> 10, 4 -> 30, 3 -> 50, 2 -> 70, 1 -> 90
        ("admiralty:5", 0.10),
        ("admiralty:4", 0.30),
        ("admiralty:3", 0.50),
        ("admiralty:2", 0.70),
        ("admiralty:1", 0.90),
        # WEP: Impossible 0, Highly Unlikely/Almost Certainly Not 10, Unlikely/Probably Not 30,
        # Even Chance 50, Likely/Probable 70, Highly likely/Almost Certain 90, Certain 100
        ("wep:impossible", 0.0),
        ("wep:highly_unlikely", 0.10),
        ("wep:almost_certainly_not", 0.10),
        ("wep:probably_not", 0.30),
        ("wep:even_chance", 0.50),
        ("wep:probable", 0.70),
        ("wep:almost_certain", 0.90),
        ("wep:certain", 1.0),
        # DNI: Almost No Chance/Remote 5, Very Unlikely/Highly Improbable 15,
        # Unlikely/Improbable 30, Roughly Even Chance/Odds 50, Likely/Probable 70,
        # Very Likely/Highly Probable 85, Almost Certain/Nearly Certain 95
        ("dni:remote", 0.05),
        ("dni:highly_improbable", 0.15),
        ("dni:unlikely", 0.30),
        ("dni:roughly_even_odds", 0.50),
        ("dni:likely", 0.70),
        ("dni:very_likely", 0.85),
        ("dni:nearly_certain", 0.95),
    ],
)
def test_stix_scales(method: str, expected: float) -> None:
    assert StixFormulaProvider().compute(0.5, method) == pytest.approx(expected)


def test_stix_offers_every_row_and_no_value_for_truth_cannot_be_judged() -> None:
    methods = StixFormulaProvider().allowed_extraction_methods()
    # nlmh 4, 0-10 11, Admiralty 5, WEP 7 rows + 4 second phrasings, DNI 7 rows x 2, stix
    assert len(methods) == 4 + 11 + 5 + 11 + 14 + 1
    assert "admiralty:6" not in methods
    assert StixFormulaProvider().compute(0.42, "stix") == 0.42


# -- flat declaration ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["api", "parsed", "manual", "llm", "declared"])
def test_flat_is_the_declared_reliability(method: str) -> None:
    assert FlatFormulaProvider().compute(0.37, method) == 0.37


def test_flat_is_clamped_by_the_gate_contract() -> None:
    assert compute_confidence(FlatFormulaProvider(), 1.7, "declared") == 1.0


# -- loading, provenance, the published catalog -------------------------------------------

PROVIDERS: list[tuple[str, type[FormulaProvider], str, float]] = [
    ("admiralty", AdmiraltyFormulaProvider, "B2", 0.56),
    ("stix", StixFormulaProvider, "wep:likely", 0.70),
    ("flat", FlatFormulaProvider, "llm", 0.9),  # person()'s reliability
]


@pytest.mark.parametrize(("name", "cls", "method", "confidence"), PROVIDERS)
def test_loaded_by_entry_point_name(
    name: str, cls: type[FormulaProvider], method: str, confidence: float
) -> None:
    assert isinstance(load_formula_provider(name), cls)


@pytest.mark.parametrize(("name", "cls", "method", "confidence"), PROVIDERS)
def test_a_write_records_the_provider(
    db_path: Path, name: str, cls: type[FormulaProvider], method: str, confidence: float
) -> None:
    with Gate.open(db_path, formula=name) as g:
        g.publish_schema(SEED_SCHEMA)
        result = g.write_node(**person(extraction_method=method))
        assert isinstance(result, WriteNodeResult)
        assert result.confidence == pytest.approx(confidence)
        event = g.log.read(after_seq=result.seq - 1, limit=1).events[0]
        assert event.provenance is not None
        assert event.provenance["formula"] == name
        assert event.provenance["extraction_method"] == method
        assert event.provenance["confidence"] == pytest.approx(confidence)


def test_a_method_of_another_provider_is_refused(db_path: Path) -> None:
    with Gate.open(db_path, formula="admiralty") as g:
        g.publish_schema(SEED_SCHEMA)
        head = g.log.head()
        result = g.write_node(**person(extraction_method="llm"))
        assert isinstance(result, Rejected)
        assert result.error_code == "INVALID_EXTRACTION_METHOD"
        assert g.log.head() == head


def test_mcp_publishes_the_provider_s_methods(db_path: Path) -> None:
    with Gate.open(db_path, formula="admiralty") as g:
        g.publish_schema(SEED_SCHEMA)
        tools = WritegateServer(g, tools="all").catalog()
        for tool in ("write_node", "add_person"):
            fields = tools[tool].input_schema()["properties"]
            assert set(fields["extraction_method"]["enum"]) == (
                AdmiraltyFormulaProvider().allowed_extraction_methods()
            )
            assert (fields["reliability"]["minimum"], fields["reliability"]["maximum"]) == (0, 1)


# -- temporal decay -----------------------------------------------------------------------

HALF_LIVES = {"llm": timedelta(days=30), "api": timedelta(days=365)}


def test_decay_halves_at_one_half_life() -> None:
    assert decayed(0.8, "llm", timedelta(days=30), HALF_LIVES) == pytest.approx(0.4)
    assert decayed(0.8, "llm", timedelta(days=60), HALF_LIVES) == pytest.approx(0.2)
    assert decayed(0.8, "api", timedelta(days=30), HALF_LIVES) == pytest.approx(
        0.8 * 0.5 ** (30 / 365)
    )


def test_decay_leaves_what_has_no_half_life_or_no_age() -> None:
    assert decayed(0.8, "manual", timedelta(days=9999), HALF_LIVES) == 0.8
    assert decayed(0.8, "llm", timedelta(0), HALF_LIVES) == 0.8
    assert decayed(0.8, "llm", timedelta(days=-3), HALF_LIVES) == 0.8  # clock skew


def test_decay_refuses_a_non_positive_half_life() -> None:
    with pytest.raises(ValueError, match="half-life for 'llm' must be positive"):
        decayed(0.8, "llm", timedelta(days=1), {"llm": timedelta(0)})
