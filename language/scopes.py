"""Scopes: the part of the graph a node belongs to (seed 003's ontologies, seed 004's
projects). A label declares its scope in the schema; one that declares none is in
``DEFAULT_SCOPE``, so a log that declares no scopes has exactly one. A relationship
belongs to both its ends' scopes: a reader sees it only when it may see both."""

from __future__ import annotations

DEFAULT_SCOPE = "default"  # the implicit scope of every node whose label declares none
# the scopes a reader may see: a set of names, or None for every scope (an operator, a
# credential without grants); an empty set sees nothing
Visible = frozenset[str] | None


def scope_or_default(scope: str | None) -> str:
    """The scope a recorded scope names (unset: the implicit one)."""
    return scope or DEFAULT_SCOPE
