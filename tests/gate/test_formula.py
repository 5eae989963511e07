"""Formula providers: the default, loading plug-ins, and the gate's contract around them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA, person
from writegate.gate import (
    DefaultFormulaProvider,
    Gate,
    Rejected,
    WriteNodeResult,
    load_formula_provider,
)


class Flat:
    """Flat declaration (seed 000 appendix): the agent's reliability is the confidence."""

    name = "flat"

    def allowed_extraction_methods(self) -> set[str]:
        return {"declared"}

    def compute(self, reliability: float, extraction_method: str) -> float:
        return reliability


class Broken:
    def __init__(self, output: object) -> None:
        self.output = output

    def allowed_extraction_methods(self) -> set[str]:
        return {"api"}

    def compute(self, reliability: float, extraction_method: str) -> object:
        if isinstance(self.output, Exception):
            raise self.output
        return self.output


def _gate(db: Path, formula: object) -> Gate:
    g = Gate.open(db, formula=formula)  # type: ignore[arg-type]
    g.publish_schema(SEED_SCHEMA)
    return g


@pytest.mark.parametrize(
    ("method", "expected"), [("api", 0.8), ("parsed", 0.68), ("manual", 0.6), ("llm", 0.48)]
)
def test_default_weights(method: str, expected: float) -> None:
    assert DefaultFormulaProvider().compute(0.8, method) == pytest.approx(expected)


@pytest.mark.parametrize(("given", "confidence"), [(7.5, 1.0), (-3, 0.0), (0.5, 0.5)])
def test_reliability_is_clamped_before_the_formula(
    db_path: Path, given: float, confidence: float
) -> None:
    with _gate(db_path, Flat()) as g:
        result = g.write_node(**person(extraction_method="declared", reliability=given))
        assert isinstance(result, WriteNodeResult)
        assert result.confidence == confidence
        event = g.log.read(after_seq=result.seq - 1, limit=1).events[0]
        assert event.provenance["reliability"] == given  # type: ignore[index]
        assert event.provenance["formula"] == "flat"  # type: ignore[index]


@pytest.mark.parametrize(
    "output", [1.5, -0.1, float("nan"), "0.5", True, None, ZeroDivisionError("x")]
)
def test_invalid_output_is_rejected(db_path: Path, output: object) -> None:
    with _gate(db_path, Broken(output)) as g:
        head = g.log.head()
        result = g.write_node(**person(extraction_method="api"))
        assert isinstance(result, Rejected)
        assert result.error_code == "FORMULA_INVALID_OUTPUT"
        assert g.log.head() == head


def test_providers_load_by_entry_point_and_dotted_path() -> None:
    assert isinstance(load_formula_provider("default"), DefaultFormulaProvider)
    assert isinstance(load_formula_provider("tests.gate.test_formula:Flat"), Flat)
    with pytest.raises(ValueError, match="no formula provider named"):
        load_formula_provider("nosuch")
    with pytest.raises(ValueError, match="cannot load"):
        load_formula_provider("tests.nowhere:Thing")


def test_env_selects_the_provider(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WRITE_GATE_FORMULA_PROVIDER", "tests.gate.test_formula:Flat")
    with Gate.open(db_path) as g:
        assert g.formula_name == "flat"
