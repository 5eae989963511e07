"""``writegate forget``: erase one personal node's data — a face over ``Gate.forget`` (the
admin's MCP tool ``forget_subject``), as the operator. What went prints as a summary
(``--format json``: the tool's result), a refusal as one line."""

from __future__ import annotations

import click

from writegate.cli.common import Context, opened, pass_ctx
from writegate.cli.jobs import bring_along
from writegate.cli.nodes import old_name, parse_node
from writegate.cli.written import emit_written, write_format
from writegate.gate.forgetting import ForgetResult


@click.command()
@click.argument("node", nargs=-1, required=True, metavar="LABEL KEY=VALUE...")
@click.option(
    "--reason",
    default="asked to be forgotten",
    show_default=True,
    help="Why: kept in the receipt event.",
)
@click.option("--dry-run", is_flag=True, help="Say what would go; change nothing.")
@write_format
@pass_ctx
def forget(
    ctx: Context, /, node: tuple[str, ...], reason: str, dry_run: bool, fmt: str, as_json: bool
) -> None:
    """Erase a personal node's data: its sealed values, read-model rows and refusals.

    The node is LABEL KEY=VALUE... (or Label:key=value). Its events stay and still verify,
    their personal values reading null; a subject.forgotten event is the receipt. Every
    configured projection is then replayed to let go of them: one that cannot be is named,
    one line each, and the exit is non-zero."""
    name = parse_node(node[0]) if len(node) == 1 else old_name(node[0], node[1:], "KEY=VALUE")
    with opened(ctx) as gate:
        result = gate.forget(name.label, name.keys, reason=reason, dry_run=dry_run, actor=ctx.actor)
        emit_written(result, fmt, as_json)
        bring_along(ctx, gate, result.seq if isinstance(result, ForgetResult) else None)
