"""Flat declaration (seed 000's appendix): the writer's reliability *is* the confidence.

For pipelines that already computed a confidence: every method weighs 1.0, so the gate
only clamps the declared number to [0, 1] and records it. The methods are the default
provider's (``api``, ``parsed``, ``manual``, ``llm``) plus ``declared``, so a writer keeps
saying how the claim was obtained while the number stays its own.
"""

from __future__ import annotations

from typing import Final

from writegate.gate.formula import DefaultFormulaProvider

METHODS: Final[frozenset[str]] = frozenset({*DefaultFormulaProvider.WEIGHTS, "declared"})


class FlatFormulaProvider:
    """Confidence = reliability, whatever the (allowed) method."""

    name = "flat"

    def allowed_extraction_methods(self) -> set[str]:
        return set(METHODS)

    def compute(self, reliability: float, extraction_method: str) -> float:
        return reliability
