"""The nodes a write refused for naming another thing (``IDENTITY_CONFLICT``) may mean.

Its merge keys met a held node whose identity disagrees; its name and values may still
be those of a node the graph holds under other keys (a surname written alone, which
another person's node holds, beside that person's full name). Those are the candidates a
creating write of the same values would be proposed: told to the writer, so it can name
the right node instead of only learning which one is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.resolution.matching import name_of, resolve
from writegate.gate.schema.registry import SchemaEntry
from writegate.language import NodeRef
from writegate.projections.state import NodeRow, StateReader


def alternatives(
    state: StateReader, conn: Sql, entry: SchemaEntry, row: NodeRow, written: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """POSSIBLE_DUPLICATE's candidates for a creating write of ``written`` (the held node
    ``row`` left out), in its words; none where its label proposes nothing."""
    rules = entry.resolution
    if rules is None:
        return []
    node = {**row.keys, **written}
    ref = NodeRef.parse(row.identity)
    try:
        name = name_of(rules, node, row.keys)
        resolve(state, conn, rules, ref, name, node, entry.group, may_land=False)
    except GateRejection as asked:
        if asked.code == ErrorCode.POSSIBLE_DUPLICATE:
            return list(asked.details["candidates"])
    return []
