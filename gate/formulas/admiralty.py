"""The Admiralty Code (NATO AJP-2.1 / STANAG 2511) as a formula provider.

How a writer states the grades: ``extraction_method`` *is* the two-character code, source
reliability letter then information credibility digit — ``"B2"`` for "usually reliable,
probably true". The 36 codes are the allowed methods, so the MCP catalog publishes them
as the ``extraction_method`` enum. ``reliability`` is still accepted in [0, 1] and recorded
as given, but does not enter the number: the letter already grades the source.

The number (the code itself publishes none) is ``credibility * source``:

- credibility, the STIX 2.1 table "Admiralty Credibility Scale to STIX Confidence"
  (Appendix A, Confidence Scales): 1 → 0.90, 2 → 0.70, 3 → 0.50, 4 → 0.30, 5 → 0.10;
- source, a linear discount: A 1.0, B 0.8, C 0.6, D 0.4, E 0.2 — a completely reliable
  source passes the STIX credibility value through unchanged.

"Cannot be judged" (``F``, ``6``) is not "bad" — a new source is F, not E — so it takes
the middle grade of its scale: F as C (0.6), 6 as 3 (0.50). Hence ``A1`` = 0.90,
``B2`` = 0.56, ``C3`` = 0.30, ``F6`` = 0.30, ``E5`` = 0.02. A better grade (A-E, 1-5)
never lowers the number.
"""

from __future__ import annotations

from typing import Final

# Information credibility -> STIX 2.1 confidence / 100 (Appendix A, Admiralty Credibility);
# 6 "Truth cannot be judged" has no STIX value ("not present"): the middle grade, 3.
CREDIBILITY: Final[dict[str, float]] = {
    "1": 0.90,  # Confirmed by other sources
    "2": 0.70,  # Probably true
    "3": 0.50,  # Possibly true
    "4": 0.30,  # Doubtful
    "5": 0.10,  # Improbable
    "6": 0.50,  # Truth cannot be judged -> as 3
}

# Source reliability -> multiplier; F "Reliability cannot be judged": the middle grade, C.
SOURCE: Final[dict[str, float]] = {
    "A": 1.0,  # Completely reliable
    "B": 0.8,  # Usually reliable
    "C": 0.6,  # Fairly reliable
    "D": 0.4,  # Not usually reliable
    "E": 0.2,  # Unreliable
    "F": 0.6,  # Reliability cannot be judged -> as C
}

CODES: Final[dict[str, float]] = {
    letter + digit: round(weight * value, 4)
    for letter, weight in SOURCE.items()
    for digit, value in CREDIBILITY.items()
}


class AdmiraltyFormulaProvider:
    """``extraction_method`` is an Admiralty code ``A1``…``F6``; see the module docstring."""

    name = "admiralty"

    def allowed_extraction_methods(self) -> set[str]:
        return set(CODES)

    def compute(self, reliability: float, extraction_method: str) -> float:
        return CODES[extraction_method]
