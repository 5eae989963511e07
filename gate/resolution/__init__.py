"""Entity resolution, the pure part: normal forms, blocking keys, scores and decisions.

No I/O and nothing from the gate: the gate indexes ``blocking_keys`` of each node's name,
probes them when a write would create a node, ``score``s the candidates and ``decide``s by
the label's policy thresholds. See fixtures/resolution/README.md for how it is measured.
"""

from writegate.gate.resolution.keys import blocking_keys, keys_of
from writegate.gate.resolution.normalize import NormalizedName, fold, normalize
from writegate.gate.resolution.score import (
    DEFAULT_THRESHOLDS,
    Match,
    Rule,
    Thresholds,
    Verdict,
    decide,
    score,
    score_normalized,
)
from writegate.gate.resolution.vetoes import Veto
from writegate.gate.resolution.vocabulary import DEFAULT_RULES, Kind, NameRules

__all__ = [
    "DEFAULT_RULES",
    "DEFAULT_THRESHOLDS",
    "Kind",
    "Match",
    "NameRules",
    "NormalizedName",
    "Rule",
    "Thresholds",
    "Verdict",
    "Veto",
    "blocking_keys",
    "decide",
    "fold",
    "keys_of",
    "normalize",
    "score",
    "score_normalized",
]
