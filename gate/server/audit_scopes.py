"""Audits for a caller granted some scopes: of a node it can see, or nothing.

An audit of one node (its events, its feedback trail) is answered for a node the caller
sees now; a node outside its grant is not found, the same answer as a node that does not
exist. An audit of the whole log (the log paged, the integrity checks, the conflicts, the
duplicates, the feedback of every fact, the report) shows everyone's writes, so it needs
a grant of every scope: anything less is ``POLICY_DENIED``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from writegate.eventlog import Event
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.reads.scoped import ScopedReader
from writegate.gate.server.tools import ToolCall
from writegate.language import NodeRef

_RELATIONSHIP = re.compile(r"\((?P<start>.+)\)-\[[A-Za-z_][A-Za-z0-9_]*\]->\((?P<end>.+)\)")


def whole_log(call: ToolCall, tool: str) -> None:
    """Refuse ``tool`` to a caller who does not see every scope."""
    if call.scopes is not None:
        raise GateRejection(
            ErrorCode.POLICY_DENIED,
            f"{tool} reads the whole log: agent {call.actor.agent!r} needs a grant of every scope",
            {"agent": call.actor.agent, "tool": tool},
        )


def readable(call: ToolCall, stream: str | None) -> Callable[[list[Event]], list[Event]] | None:
    """For a caller granted some scopes, what of a node's events it may read
    (``ScopedReader.readable``); None: everything (an audit of the whole log needs every
    scope, ``whole_log``)."""
    reader = call.reader
    if call.scopes is None or stream is None or not isinstance(reader, ScopedReader):
        return None
    identity = stream.removeprefix("node:")
    return lambda events: reader.readable(identity, events)


def must_see(call: ToolCall, identity: str) -> None:
    """Refuse, as not found, an audit of a node (or a relationship, by its ends) that a
    caller granted some scopes cannot see now."""
    if call.scopes is None:
        return
    found = _RELATIONSHIP.fullmatch(identity)
    for node in [found["start"], found["end"]] if found else [identity]:
        try:
            ref = NodeRef.parse(node)
        except ValueError:
            raise GateRejection(
                ErrorCode.INVALID_ARGUMENT,
                "identity is not a node's or a relationship's",
                {"field": "identity"},
            ) from None
        # the caller's reader: a node outside its grant is not found, as a missing one
        call.reader.node_history({"label": ref.label, "merge_keys": ref.keys}, limit=1)
