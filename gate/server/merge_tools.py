"""Tools for reviewers (and admins): merge a duplicate node into its survivor, and undo it.

Faces over ``gate.merges.operations`` — the same calls as ``writegate merge`` / ``unmerge`` — in the
policy's ``review`` group, so agents without the role never see them. Both are events;
``unmerge_nodes`` restores exactly what a merge changed.
"""

from __future__ import annotations

from writegate.gate.merges.operations import (
    MergeNodesRequest,
    MergeResult,
    Merges,
    UnmergeNodesRequest,
    UnmergeResult,
)
from writegate.gate.models import Rejected
from writegate.gate.server.tools import ToolCall, ToolSpec, tool
from writegate.gate.server.write_tools import Idempotent


class MergeNodesArgs(MergeNodesRequest, Idempotent):
    pass


class UnmergeNodesArgs(UnmergeNodesRequest, Idempotent):
    pass


@tool("review", destructive=True)
def merge_nodes(call: ToolCall, args: MergeNodesArgs) -> MergeResult | Rejected:
    """Fold a duplicate node into a survivor of the same label: its relationships move to
    the survivor, its values are taken by each property's conflict policy, and its identity
    becomes an alias later writes land on. Reversible with unmerge_nodes and the merge id."""
    return Merges(call.gate.writer).merge_nodes(call.raw, call.actor)


@tool("review", destructive=True)
def unmerge_nodes(call: ToolCall, args: UnmergeNodesArgs) -> UnmergeResult | Rejected:
    """Undo one merge: the duplicate returns with its values, relationships and who set
    each; survivor values written since the merge stay as they are (listed in kept)."""
    return Merges(call.gate.writer).unmerge_nodes(call.raw, call.actor)


MERGE_TOOLS: tuple[ToolSpec, ...] = (merge_nodes, unmerge_nodes)
