"""Choosing an embedder by name, as formula providers are chosen (``gate.formula``).

Embedders register under the entry-point group ``writegate.embedders`` (the shipped
``wordllama`` among them, in ``pyproject.toml``); a dotted path ``package.module:Class``
names one that is not registered. Nothing is loaded until an embedder is asked for, and
whatever stops one being had is one line (``EmbedderUnavailable``) naming it and the fix.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from writegate.projections.vectors.contract import Embedder, EmbedderUnavailable

ENTRY_POINT_GROUP = "writegate.embedders"


def registered() -> list[str]:
    """The names of the embedders installed under the entry-point group."""
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def load_embedder(spec: str) -> Embedder:
    """The embedder named ``spec`` (an entry-point name or ``package.module:Class``)."""
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            target = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise EmbedderUnavailable(f"cannot load embedder {spec!r}: {exc}") from exc
    else:
        found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
        if not found:
            known = ", ".join(registered()) or "none installed"
            raise EmbedderUnavailable(
                f"no embedder named {spec!r} (entry point group {ENTRY_POINT_GROUP!r}: "
                f"{known}); use 'package.module:Class' for a dotted path"
            )
        try:
            target = found[0].load()
        except ImportError as exc:
            raise EmbedderUnavailable(f"cannot load embedder {spec!r}: {exc}") from exc
    embedder = target() if isinstance(target, type) else target
    if not isinstance(embedder, Embedder):
        raise EmbedderUnavailable(f"{spec!r} is not an embedder (name, dimensions, embed)")
    return embedder
