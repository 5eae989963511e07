"""A caller's grant of scopes, from its credential to each call (``language.scopes`` says
what a scope is): the scopes it may read and write, after the Cedar policy
(``Policy.grant``) and the operator's switch (``[scopes] disabled``).

A credential names its grant as access-token scopes: ``writegate:scope:<name>`` for each
scope, ``writegate:scope:*`` for every scope; a credential naming none grants the
implicit scope only (``IMPLICIT``) — so a log that declares no scopes works as before,
and a scope declared later is never seen by a credential that was not given it. Tokens
from the tokens file carry their records' grants in these same strings, so the server
reads one form whatever authenticated the caller.

A scope switched off is taken from every caller's grant; a caller left with none is
answered ``{disabled: true}`` by the graph tools (``Disabled``), without error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from writegate.gate.schema import LoadedSchema
from writegate.gate.scopes import known_scopes
from writegate.language import DEFAULT_SCOPE, IDENTIFIER

SCOPE_CLAIM = "writegate:scope:"
EVERY_SCOPE = SCOPE_CLAIM + "*"
IMPLICIT: frozenset[str] = frozenset({DEFAULT_SCOPE})


def valid_scope(name: str) -> bool:
    """Whether ``name`` can be a scope (the schema's rule for a label's ``scope``)."""
    return IDENTIFIER.fullmatch(name) is not None


def claims_of(granted: frozenset[str] | None) -> list[str]:
    """The access-token scopes that say ``granted`` (None: every scope)."""
    if granted is None:
        return [EVERY_SCOPE]
    return [SCOPE_CLAIM + name for name in sorted(granted)]


def granted_by(claims: Iterable[str]) -> frozenset[str] | None:
    """The grant access-token scopes say: None for every scope, else the names (a claim
    that names no valid scope grants nothing); no claim at all: the implicit scope."""
    named = [c.removeprefix(SCOPE_CLAIM) for c in claims if c.startswith(SCOPE_CLAIM)]
    if "*" in named:
        return None
    if not named:
        return IMPLICIT
    return frozenset(n for n in named if valid_scope(n))


class Disabled(BaseModel):
    """A graph tool's answer while the caller has no enabled scope (seed 004's per-project
    gate: ``{disabled: true}``, a result, not an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    disabled: Literal[True] = True


def declared_scopes(snapshot: LoadedSchema | None) -> frozenset[str]:
    """The scopes a schema's labels declare (the implicit one aside)."""
    return frozenset(known_scopes(snapshot)) - {DEFAULT_SCOPE}  # a write's choices among them


@dataclass(frozen=True)
class CallGrant:
    """What one call may use, after the policy and the switch.

    ``writes``: the scopes a write may touch (None: every one). ``reads``: the same, but
    None also when it holds every scope the schema declares and the implicit one — the
    caller sees the whole graph, so it reads as everyone did before scopes (the past, the
    vectors' search). ``disabled``: the switch (``[scopes] disabled``) left it none."""

    writes: frozenset[str] | None
    reads: frozenset[str] | None
    disabled: bool


def call_grant(
    permitted: frozenset[str] | None, declared: frozenset[str], switched_off: frozenset[str]
) -> CallGrant:
    """The grant of a call whose credential and policy permit ``permitted``, on a schema
    declaring ``declared``, with the scopes ``switched_off`` disabled for everyone."""
    everything = declared | IMPLICIT
    writes = permitted
    if switched_off and (permitted is None or permitted & switched_off):
        writes = (everything if permitted is None else permitted) - switched_off
    disabled = writes is not None and not writes and writes != permitted
    reads = None if writes is None or writes >= everything else writes
    return CallGrant(writes=writes, reads=reads, disabled=disabled)
