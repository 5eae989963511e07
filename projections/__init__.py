"""Projections: stores built by replaying the event log (state read model, graph, files)."""
