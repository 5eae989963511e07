"""Ids as people type them: whole, or any prefix that names one thing.

Proposal and merge ids are 32 hex digits, printed whole everywhere; typing them whole is
not required. Every command that takes an id resolves it here, through the stream the
log keeps for it (``proposal:<id>``, ``merge:<id>``), so a prefix means the same in each.
A prefix matching several is refused in one line saying how many; one matching none is
passed on as typed, so the command says what it says of an unknown id.
"""

from __future__ import annotations

from typing import Literal

from writegate.cli.common import fail
from writegate.cli.render import counted
from writegate.eventlog.contract import Log

IdKind = Literal["proposal", "merge"]
_SHOWN = 100  # count this many matches at most; more reads "100 or more"


def resolve_id(log: Log, kind: IdKind, given: str) -> str:
    """The whole id ``given`` starts, or ``given`` itself when it names none."""
    prefix = f"{kind}:{given}"
    found = log.streams_starting(prefix, _SHOWN + 1)
    if prefix in found or not found:
        return given
    if len(found) > 1:
        many = f"{_SHOWN} or more {kind}s" if len(found) > _SHOWN else counted(len(found), kind)
        fail(f"{kind} id {given!r} is the start of {many}: type more of it", 2)
    return found[0].removeprefix(f"{kind}:")
