"""The current-state read model: nodes and relationships as they stand now.

This package owns the ``state_*`` tables: ``tables`` (their DDL), ``changes`` (how each
event changes them), ``queries`` (every question asked of them) and ``projection`` (the
inline projector the log runs in each append's transaction).
"""

from writegate.projections.state.changes import apply_to_state, merge_properties
from writegate.projections.state.projection import StateProjection
from writegate.projections.state.queries import (
    Attached,
    EdgeRow,
    EndedEdge,
    Fact,
    NodeRow,
    StateCounts,
    StateReader,
)

__all__ = [
    "Attached",
    "EdgeRow",
    "EndedEdge",
    "Fact",
    "NodeRow",
    "StateCounts",
    "StateProjection",
    "StateReader",
    "apply_to_state",
    "merge_properties",
]
