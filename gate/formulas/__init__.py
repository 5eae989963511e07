"""Formula providers beyond the default (seed 000's appendix), each an entry point.

``admiralty`` (NATO AJP-2.1 codes), ``stix`` (the STIX 2.1 confidence scales), ``flat``
(the writer's reliability is the confidence); and ``decayed``, a read-time half-life that
is never written to the log. ``writegate.gate.formula`` keeps the protocol and the loader.
"""

from writegate.gate.formulas.admiralty import AdmiraltyFormulaProvider
from writegate.gate.formulas.decay import decayed
from writegate.gate.formulas.flat import FlatFormulaProvider
from writegate.gate.formulas.stix import StixFormulaProvider

__all__ = ["AdmiraltyFormulaProvider", "FlatFormulaProvider", "StixFormulaProvider", "decayed"]
