"""The current-state read model: nodes and relationships as they stand now.

This package owns the ``state_*`` tables: ``tables`` (their DDL), ``changes`` (how each
event changes them), ``queries`` (every question asked of them; ``observations`` keeps and
answers those of observations and the writes citing them) and ``projection`` (the inline
projector the log runs in each append's transaction).
"""

from writegate.projections.state.changes import apply_to_state, merge_properties
from writegate.projections.state.observations import CitationRow, ObservationReader, ObservationRow
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
    "CitationRow",
    "EdgeRow",
    "EndedEdge",
    "Fact",
    "NodeRow",
    "ObservationReader",
    "ObservationRow",
    "StateCounts",
    "StateProjection",
    "StateReader",
    "apply_to_state",
    "merge_properties",
]
