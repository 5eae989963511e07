"""``writegate verify``: is the history what was written? (a face over ``Gate.verify``)"""

from __future__ import annotations

import click

from writegate.cli.common import Context, fail, opened, pass_ctx
from writegate.cli.stores import projection_checkpoints


@click.command()
@click.option("--anchor", is_flag=True, help="Print the head as SEQ:HASH to record elsewhere.")
@click.option(
    "--expect-head", metavar="SEQ:HASH", help="Fail unless history up to SEQ is unchanged."
)
@pass_ctx
def verify(ctx: Context, anchor: bool, expect_head: str | None) -> None:
    """Check that the history is what was written.

    The hash chain, the append-only triggers, the state read model against a replay and
    every configured projection's checkpoint; exit non-zero naming the first failure."""
    expected = _anchor_argument(expect_head) if expect_head else None
    settings = ctx.settings()
    with opened(ctx, readonly=True) as gate:
        checkpoints: dict[str, int] = {}
        for row in projection_checkpoints(settings, gate.log):
            if row.checkpoint is None:
                fail(f"projection {row.name} could not be read: {row.error}")
            checkpoints[row.name] = row.checkpoint
        report = gate.verify(checkpoints=checkpoints, expect_head=expected)
        head = gate.log.head()
    for check in report.checks:
        click.echo(f"{'ok  ' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
    if (failure := report.first_failure) is not None:
        fail(f"{failure.name}: {failure.detail}")
    if anchor:
        click.echo(f"{head[0]}:{head[1]}")


def _anchor_argument(text: str) -> tuple[int, str]:
    seq, sep, digest = text.partition(":")
    if not sep or not seq.isdigit() or len(digest) != 64:
        fail(f"--expect-head {text!r} is not SEQ:HASH (as printed by verify --anchor)", 2)
    return int(seq), digest
