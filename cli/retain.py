"""``writegate retain``: forget the personal values the schema's retention periods have
passed — a face over ``Gate.retain``, as the operator. What went prints as one line
(``--format json``: the result), a refusal as one line."""

from __future__ import annotations

import click

from writegate.cli.common import Context, emit_result, opened, pass_ctx
from writegate.cli.render import counted
from writegate.cli.written import write_format


@click.command()
@click.option("--dry-run", is_flag=True, help="Say what would go; change nothing.")
@write_format
@pass_ctx
def retain(ctx: Context, /, dry_run: bool, fmt: str, as_json: bool) -> None:
    """Forget superseded personal values and personal observations' text past retention.

    The periods are the schema's (a personal property's retention, observation_retention).
    Their events stay and still verify, the expired values reading null; the subjects'
    current values stay readable; a values.expired event is the receipt."""
    from writegate.gate import Rejected

    with opened(ctx) as gate:
        result = gate.retain(dry_run=dry_run, actor=ctx.actor)
    if isinstance(result, Rejected) or fmt == "json" or as_json:
        emit_result(result)
        return
    what = "would expire" if result.dry_run else "expired"
    stores = ", ".join(f"{n} {store}" for store, n in sorted(result.counts.items()))
    at = f" at seq {result.seq}" if result.seq is not None else ""
    policy = ", ".join(f"{name} {period}" for name, period in result.policy.items())
    click.echo(
        f"{what} {counted(result.values, 'value')}{at}: {counted(len(result.events), 'event')}"
        + (f"; {stores}" if stores else "")
        + (f" (retention: {policy})" if policy else " (the schema declares no retention)")
    )
