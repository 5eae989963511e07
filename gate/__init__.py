"""The Write Gate: schema-checked writes with computed provenance (seed 000).

``Gate`` is the whole Python API; the CLI and the MCP tools are thin faces over it.
"""

from writegate.gate.api import Gate
from writegate.gate.errors import ERROR_MEANINGS, ErrorCode, GateRejection
from writegate.gate.feedback import EdgeKey, FeedbackSettings, ImproveResult
from writegate.gate.formula import DefaultFormulaProvider, FormulaProvider, load_formula_provider
from writegate.gate.models import (
    BatchResult,
    DeleteNodeResult,
    DeleteRelationshipResult,
    PublishResult,
    RefreshResult,
    Rejected,
    WriteNodeResult,
    WriteRelationshipResult,
    dump,
)
from writegate.gate.observations import ObservationResult
from writegate.gate.version import __version__

__all__ = [
    "ERROR_MEANINGS",
    "BatchResult",
    "DefaultFormulaProvider",
    "DeleteNodeResult",
    "DeleteRelationshipResult",
    "EdgeKey",
    "ErrorCode",
    "FeedbackSettings",
    "FormulaProvider",
    "Gate",
    "GateRejection",
    "ImproveResult",
    "ObservationResult",
    "PublishResult",
    "RefreshResult",
    "Rejected",
    "WriteNodeResult",
    "WriteRelationshipResult",
    "__version__",
    "dump",
    "load_formula_provider",
]
