"""Confidence formula providers (seed 000): pluggable, the gate guards their contract."""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from writegate.gate.errors import ErrorCode, GateRejection

ENTRY_POINT_GROUP = "writegate.formula_providers"
# the most independent support can make a fact: corroboration never makes it certain
CORROBORATION_CAP = 0.99


@runtime_checkable
class FormulaProvider(Protocol):
    def allowed_extraction_methods(self) -> set[str]: ...

    def compute(self, reliability: float, extraction_method: str) -> float: ...


@runtime_checkable
class Corroborating(Protocol):
    """A provider's own rule for a fact several independent sources support (optional:
    a provider without one gets ``noisy_or``). ``confidences`` holds one number per
    distinct source, each that source's best confidence for the fact."""

    def corroborate(self, confidences: Sequence[float]) -> float: ...


def noisy_or(confidences: Sequence[float]) -> float:
    """``1 - prod(1 - c)`` over independent sources, capped at ``CORROBORATION_CAP`` — but
    never below the best single source (one source alone is its own confidence, so a
    corroboration never lowers what a fact was)."""
    if not confidences:
        return 0.0
    best = max(confidences)
    if len(confidences) == 1:
        return best
    doubt = 1.0
    for confidence in confidences:
        doubt *= 1.0 - confidence
    return max(best, min(CORROBORATION_CAP, 1.0 - doubt))


class DefaultFormulaProvider:
    """Deliberately simple, so the primitive does not dictate ideology (seed 000)."""

    name = "default"  # its entry-point name: what provenance records and operators select
    WEIGHTS = {  # noqa: RUF012  (seed 000 spells the default exactly so)
        "api": 1.0,  # Live API / CLI / deterministic machine output
        "parsed": 0.85,  # Structured doc (YAML, JSON, HCL, Markdown frontmatter)
        "manual": 0.75,  # Human explicitly stated — capped below verified sources
        "llm": 0.60,  # LLM-extracted from unstructured text
    }

    def allowed_extraction_methods(self) -> set[str]:
        return set(self.WEIGHTS.keys())

    def compute(self, reliability: float, extraction_method: str) -> float:
        return reliability * self.WEIGHTS[extraction_method]

    def corroborate(self, confidences: Sequence[float]) -> float:
        return noisy_or(confidences)


def formula_name(provider: FormulaProvider) -> str:
    """The name recorded in provenance: ``name`` if the provider has one, else its class path."""
    name = getattr(provider, "name", None)
    if isinstance(name, str) and name:
        return name
    cls = type(provider)
    return f"{cls.__module__}:{cls.__qualname__}"


def load_formula_provider(spec: str | None) -> FormulaProvider:
    """Load by entry-point name (``default``) or dotted path (``package.module:Class``)."""
    if not spec or spec == "default":
        return DefaultFormulaProvider()
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            target = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"cannot load formula provider {spec!r}: {exc}") from exc
    else:
        found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
        if not found:
            raise ValueError(
                f"no formula provider named {spec!r} (entry point group {ENTRY_POINT_GROUP!r}); "
                "use 'package.module:Class' for a dotted path"
            )
        target = found[0].load()
    provider = target() if isinstance(target, type) else target
    if not isinstance(provider, FormulaProvider):
        raise ValueError(f"{spec!r} does not implement FormulaProvider")
    return provider


def compute_confidence(provider: FormulaProvider, reliability: float, method: str) -> float:
    """The gate's contract around a provider: method allowed, input clamped, output checked."""
    allowed = provider.allowed_extraction_methods()
    if method not in allowed:
        raise GateRejection(
            ErrorCode.INVALID_EXTRACTION_METHOD,
            f"extraction_method {method!r} is not one of {sorted(allowed)}",
            {"extraction_method": method, "allowed": sorted(allowed)},
        )
    clamped = min(1.0, max(0.0, float(reliability)))
    try:
        value = provider.compute(clamped, method)
    except Exception as exc:  # a plug-in's failure is its output being invalid, not our crash
        raise GateRejection(
            ErrorCode.FORMULA_INVALID_OUTPUT,
            f"formula provider failed: {type(exc).__name__}: {exc}",
            {"formula": formula_name(provider)},
        ) from exc
    return _confidence(provider, value, "returned")


def _confidence(provider: FormulaProvider, value: object, said: str) -> float:
    """A provider's output, if it is a confidence; else ``FORMULA_INVALID_OUTPUT``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 <= value <= 1.0
    ):
        raise GateRejection(
            ErrorCode.FORMULA_INVALID_OUTPUT,
            f"formula provider {said} {value!r}; confidence must be a number in [0.0, 1.0]",
            {"formula": formula_name(provider), "returned": repr(value)},
        )
    return float(value)


def corroborated(provider: FormulaProvider, confidences: Sequence[float]) -> float:
    """A fact's confidence with the support of several sources (one number a source), by
    the provider's ``corroborate`` or ``noisy_or``; guarded as ``compute`` is."""
    rule = provider.corroborate if isinstance(provider, Corroborating) else noisy_or
    try:
        value = rule(list(confidences))
    except Exception as exc:  # a plug-in's failure is its output being invalid, not our crash
        raise GateRejection(
            ErrorCode.FORMULA_INVALID_OUTPUT,
            f"formula provider failed to corroborate: {type(exc).__name__}: {exc}",
            {"formula": formula_name(provider)},
        ) from exc
    return _confidence(provider, value, "corroborated to")
