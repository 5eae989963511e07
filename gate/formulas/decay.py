"""Temporal decay: a confidence halves every half-life of its extraction method.

Applied at read time only — the log keeps the confidence the gate computed when the write
landed, so a decayed value is never written back, and changing the half-lives re-reads the
whole history under the new ones. A method without a half-life does not decay.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import timedelta


def decayed(
    confidence: float,
    extraction_method: str,
    age: timedelta,
    half_lives: Mapping[str, timedelta],
) -> float:
    """``confidence * 0.5 ** (age / half_life)``; an age below zero (clock skew) counts as 0."""
    half_life = half_lives.get(extraction_method)
    if half_life is None:
        return confidence
    if half_life <= timedelta(0):
        raise ValueError(f"half-life for {extraction_method!r} must be positive, got {half_life}")
    elapsed = max(age, timedelta(0))
    return confidence * math.pow(0.5, elapsed / half_life)
