"""The catalog: every tool a server offers for the current schema snapshot.

The generic tools (``write_tools``, ``observation_tools``, ``read_tools``, ``audit_tools``,
``feedback_tools`` …) plus the per-label tools of the snapshot (``label_tools``), filtered
to the families ``serve --tools`` chose, each publishing the snapshot's vocabulary: the
extraction methods the gate's formula accepts, and its labels and relationship types.
"""

from __future__ import annotations

from writegate.gate.schema import LoadedSchema
from writegate.gate.schema.registry import relationship_types
from writegate.gate.server.audit_tools import AUDIT_TOOLS
from writegate.gate.server.feedback_tools import FEEDBACK_TOOLS
from writegate.gate.server.forget_tools import FORGET_TOOLS
from writegate.gate.server.job_tools import JOB_TOOLS
from writegate.gate.server.label_tools import label_tools
from writegate.gate.server.merge_tools import MERGE_TOOLS
from writegate.gate.server.observation_tools import OBSERVATION_TOOLS
from writegate.gate.server.read_tools import READ_TOOLS
from writegate.gate.server.retract_tools import RETRACT_TOOLS
from writegate.gate.server.review_tools import REVIEW_TOOLS
from writegate.gate.server.tools import ToolSpec, Vocabulary, families
from writegate.gate.server.write_tools import WRITE_TOOLS

BUILTIN_TOOLS: tuple[ToolSpec, ...] = (
    WRITE_TOOLS
    + OBSERVATION_TOOLS
    + READ_TOOLS
    + AUDIT_TOOLS
    + REVIEW_TOOLS
    + RETRACT_TOOLS
    + MERGE_TOOLS
    + JOB_TOOLS
    + FEEDBACK_TOOLS
    + FORGET_TOOLS
)
TOOL_FAMILIES = ("all", "generic", "labels")


def build_catalog(
    snapshot: LoadedSchema | None, methods: tuple[str, ...], choice: str = "all"
) -> dict[str, ToolSpec]:
    """Name -> spec, for one snapshot (None: no schema yet, built-in tools only)."""
    specs = list(BUILTIN_TOOLS)
    vocabulary = Vocabulary(methods)
    if snapshot is not None:
        specs += label_tools(snapshot, (s.name for s in BUILTIN_TOOLS))
        registry = snapshot.registry
        vocabulary = Vocabulary(
            methods, tuple(registry.all_canonical_labels()), tuple(relationship_types(registry))
        )
    return {spec.name: spec.with_vocabulary(vocabulary) for spec in families(specs, choice)}
