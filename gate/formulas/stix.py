"""The STIX 2.1 confidence scales as a formula provider.

OASIS STIX 2.1 (Part 1, Appendix A "Confidence Scales") maps five qualitative scales onto
its 0-100 ``confidence``; this provider reproduces those tables and divides by 100.

How a writer states a grade: ``extraction_method`` is ``SCALE:VALUE`` — ``nlmh:med``,
``zero_ten:7``, ``admiralty:2``, ``wep:likely``, ``dni:very_likely`` — lower case, words
joined by ``_``; where a row names two phrasings (``Likely / Probable``) both are accepted.
Every pair is an allowed method, so the MCP catalog publishes them as the enum. A writer
that already holds a STIX ``confidence`` says ``stix`` and gives it as ``reliability``
(``confidence / 100``). For the scale methods ``reliability`` is recorded but unused.

Admiralty credibility 6 ("Truth cannot be judged") has no STIX value — the spec leaves
``confidence`` out — so it is not offered: the gate answers ``INVALID_EXTRACTION_METHOD``.
"""

from __future__ import annotations

from typing import Final

# Each table: the scale's value(s) -> STIX confidence (0-100), as published in STIX 2.1.
NONE_LOW_MED_HIGH: Final[dict[tuple[str, ...], int]] = {
    ("none",): 0,
    ("low",): 15,
    ("med",): 50,
    ("high",): 85,
}
ZERO_TEN: Final[dict[tuple[str, ...], int]] = {(str(n),): n * 10 for n in range(11)}
ADMIRALTY_CREDIBILITY: Final[dict[tuple[str, ...], int]] = {
    ("5",): 10,  # Improbable
    ("4",): 30,  # Doubtful
    ("3",): 50,  # Possibly True
    ("2",): 70,  # Probably True
    ("1",): 90,  # Confirmed by other sources
}  # 6 - Truth cannot be judged: "(Not present)"
WEP: Final[dict[tuple[str, ...], int]] = {
    ("impossible",): 0,
    ("highly_unlikely", "almost_certainly_not"): 10,
    ("unlikely", "probably_not"): 30,
    ("even_chance",): 50,
    ("likely", "probable"): 70,
    ("highly_likely", "almost_certain"): 90,
    ("certain",): 100,
}
DNI: Final[dict[tuple[str, ...], int]] = {
    ("almost_no_chance", "remote"): 5,
    ("very_unlikely", "highly_improbable"): 15,
    ("unlikely", "improbable"): 30,
    ("roughly_even_chance", "roughly_even_odds"): 50,
    ("likely", "probable"): 70,
    ("very_likely", "highly_probable"): 85,
    ("almost_certain", "nearly_certain"): 95,
}
SCALES: Final[dict[str, dict[tuple[str, ...], int]]] = {
    "nlmh": NONE_LOW_MED_HIGH,
    "zero_ten": ZERO_TEN,
    "admiralty": ADMIRALTY_CREDIBILITY,
    "wep": WEP,
    "dni": DNI,
}
PASS_THROUGH: Final = "stix"  # reliability already is a STIX confidence / 100

METHODS: Final[dict[str, float]] = {
    f"{scale}:{value}": stix / 100
    for scale, table in SCALES.items()
    for values, stix in table.items()
    for value in values
}


class StixFormulaProvider:
    """``extraction_method`` is ``SCALE:VALUE`` (or ``stix``); see the module docstring."""

    name = "stix"

    def allowed_extraction_methods(self) -> set[str]:
        return {*METHODS, PASS_THROUGH}

    def compute(self, reliability: float, extraction_method: str) -> float:
        if extraction_method == PASS_THROUGH:
            return reliability
        return METHODS[extraction_method]
