"""The current-state read model: nodes and relationships as they stand now.

This package owns the ``state_*`` tables: ``tables`` (their DDL), ``changes`` (how each
event changes them), ``queries`` (every question asked of them) and ``projection`` (the
inline projector the log runs in each append's transaction); ``feedback`` keeps the
weights feedback gives facts and answers what a ranking asks of them; ``observations``
keeps and answers those of observations and the writes citing them; ``support`` keeps
the writes supporting each fact's current version (its writer and its corroborations);
``tallies`` keeps how many nodes each label has, relationships each type, and stubs. Its
text index answers with ``Hit`` rows, looking for a query's ``search_words``.
"""

from writegate.projections.search.contract import Hit, entity_text, search_words
from writegate.projections.state.changes import apply_to_state, merge_properties
from writegate.projections.state.feedback import DEFAULT_FLOOR, feedback_weights, rank_factor
from writegate.projections.state.observations import CitationRow, ObservationQueries, ObservationRow
from writegate.projections.state.projection import StateProjection
from writegate.projections.state.queries import (
    EdgeRow,
    EndedEdge,
    Fact,
    NodeRow,
    StateCounts,
    StateReader,
)
from writegate.projections.state.support import Support, SupportQueries, sources
from writegate.projections.state.walk import Attached

__all__ = [
    "DEFAULT_FLOOR",
    "Attached",
    "CitationRow",
    "EdgeRow",
    "EndedEdge",
    "Fact",
    "Hit",
    "NodeRow",
    "ObservationQueries",
    "ObservationRow",
    "StateCounts",
    "StateProjection",
    "StateReader",
    "Support",
    "SupportQueries",
    "apply_to_state",
    "entity_text",
    "feedback_weights",
    "merge_properties",
    "rank_factor",
    "search_words",
    "sources",
]
