"""How a value typed bare on the command line is read: as the schema declares its property.

``born=1815`` reads as JSON where nothing says otherwise (a number), but a property the
schema declares a string keeps what was typed (``-p title=1984``, ``Paper:doi=10.5``), as an
MCP client's JSON would have it; ``null`` still removes a property. The schema is read once
a command, from the log it names, and only when a bare value read as something other than a
string; without a log or a schema, values read as JSON (and a refusal says how to quote).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from writegate.gate.schema import LoadedSchema

Types = Mapping[str, str | None]  # property -> its declared type (None: any)
Declared = Callable[[], Types]  # asked only when a bare value is not a string
QUOTING = (
    "on the command line a bare value reads as JSON unless its property is declared a "
    """string: quote one to send a string, NAME='"1984"'"""
)
_CACHE = "writegate.declared"


def read_as_declared(text: str, parsed: Any, declared: Declared | None, name: str) -> Any:
    """``parsed`` (``text`` read as JSON), or ``text`` itself where ``name`` is declared a
    string and JSON read another scalar."""
    if declared is None or parsed is None or isinstance(parsed, str):
        return parsed
    if isinstance(parsed, bool | int | float) and declared().get(name) == "string":
        return text
    return parsed


def node_types(label: str) -> Types:
    """The declared types of ``label``'s properties (a synonym reads its canonical label)."""
    if (schema := _schema()) is None:
        return {}
    registry = schema.registry
    entry = registry.get_entry(label) or registry.get_entry(registry.remap_target(label) or "")
    return {n: spec.type for n, spec in entry.properties.items()} if entry is not None else {}


def relationship_types(rtype: str) -> Types:
    """The declared types of a relationship type's properties (a synonym reads its own)."""
    if (schema := _schema()) is None:
        return {}
    registry = schema.registry
    entry = registry.get_relationship_type(rtype) or registry.get_relationship_type(
        registry.relationship_remap_target(rtype) or ""
    )
    return {n: spec.type for n, spec in entry.properties.items()} if entry is not None else {}


def _schema() -> LoadedSchema | None:
    """The schema of the log this command names, read once (None: no log, or no schema)."""
    click_ctx = click.get_current_context(silent=True)
    if click_ctx is None:
        return None
    if _CACHE not in click_ctx.meta:
        click_ctx.meta[_CACHE] = _read(click_ctx)
    found: LoadedSchema | None = click_ctx.meta[_CACHE]
    return found


def _read(click_ctx: click.Context) -> LoadedSchema | None:
    from writegate.cli.common import Context
    from writegate.eventlog import EventLogError
    from writegate.gate.schema import SchemaSourceUnavailable

    ctx = click_ctx.find_object(Context)
    if ctx is None:
        return None
    try:
        gate = ctx.gate(readonly=True)
    except (FileNotFoundError, EventLogError, sqlite3.DatabaseError, ValueError):
        return None  # no log yet: the command itself says so, or makes one
    try:
        return gate.current_schema()
    except (SchemaSourceUnavailable, ValueError):
        return None
    finally:
        gate.close()
