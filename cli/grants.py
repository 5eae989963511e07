"""What a CLI read may see: ``--scope`` and ``[scopes] disabled``, as an agent's grant is made.

The operator reads everything unless told otherwise. ``--scope`` reads as an agent granted
only those scopes would, and the configuration's ``[scopes] disabled`` takes its scopes out
of every read, as the server's switch does for every caller (``gate.server.grants``). The
graph reads (search, open, neighbors, path, query, the exports) then answer inside that
grant; a read of the whole log (the log, audits, the report, a subject's export, the review
queue, a node's past) shows every scope's writes, so it is refused — ``POLICY_DENIED``, as
the MCP tools refuse it — unless the grant holds every scope.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from writegate.cli.common import Context, fail

if TYPE_CHECKING:  # loaded when a command opens the log, not for --help
    from writegate.gate import Gate
    from writegate.gate.scopes import Scopes


def declared_only(gate: Gate, scopes: Iterable[str]) -> None:
    """Refuse a scope the log's schema does not name (``--scope`` of a read, of ``serve``, of
    ``token create``): a mistyped one would grant nothing, and the agent would see an empty
    graph without a word."""
    from writegate.cli.read import schema_or_none
    from writegate.gate.scopes import known_scopes
    from writegate.language import DEFAULT_SCOPE

    known = known_scopes(schema_or_none(gate))
    if unknown := sorted(set(scopes) - set(known)):
        named = [s for s in known if s != DEFAULT_SCOPE]
        declared = (
            f"the schema declares {', '.join(named)} (and the implicit {DEFAULT_SCOPE!r})"
            if named
            else "the schema declares no scopes (only the implicit 'default')"
        )
        fail(f"no such scope: {', '.join(unknown)}; {declared}", 2)


def switched_off(ctx: Context) -> frozenset[str]:
    """The configuration's ``[scopes] disabled`` (none without a configuration)."""
    return frozenset(ctx.settings().scopes.disabled) if ctx.configured() else frozenset()


def read_grant(ctx: Context, gate: Gate) -> Scopes:
    """The scopes this command's reads see (``granted`` None: every one); a grant the switch
    left empty is refused in one line, as a tool answers ``disabled``."""
    from writegate.gate.scopes import ALL, Scopes

    disabled = switched_off(ctx)
    if ctx.scopes is None and not disabled:
        return ALL
    from writegate.cli.read import schema_or_none
    from writegate.gate.server.grants import call_grant, declared_scopes

    declared_only(gate, ctx.scopes or ())
    grant = call_grant(ctx.scopes, declared_scopes(schema_or_none(gate)), disabled)
    if grant.disabled:
        off = ", ".join(sorted(disabled))
        fail(f"every scope this read may see is switched off ([scopes] disabled: {off})")
    return Scopes(granted=grant.reads)


def whole_log(ctx: Context, gate: Gate, command: str) -> None:
    """Refuse ``command``, which reads the whole log, unless its grant holds every scope."""
    if read_grant(ctx, gate).granted is None:
        return
    why = [f"--scope {' '.join(sorted(ctx.scopes))}"] if ctx.scopes is not None else []
    if disabled := switched_off(ctx):
        why.append(f"[scopes] disabled {', '.join(sorted(disabled))}")
    fail(
        f"POLICY_DENIED: {command} reads the whole log, every scope's writes: it needs a grant "
        f"of every scope, and {' and '.join(why)} leave it fewer"
    )
