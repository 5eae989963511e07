"""``writegate verify``: is the history what was written? (a face over ``check_integrity``,
the function ``Gate.verify`` and the ``integrity_report`` tool call)"""

from __future__ import annotations

import click
import orjson

from writegate.cli.common import Context, fail, opened, pass_ctx
from writegate.cli.render import format_option
from writegate.cli.stores import projection_checkpoints


@click.command()
@click.option("--anchor", is_flag=True, help="Print the head as SEQ:HASH to record elsewhere.")
@click.option(
    "--expect-head", metavar="SEQ:HASH", help="Fail unless history up to SEQ is unchanged."
)
@format_option("table", "json")
@pass_ctx
def verify(ctx: Context, anchor: bool, expect_head: str | None, fmt: str) -> None:
    """Check that the history is what was written.

    The hash chain, the append-only triggers, the history index a node's trail is read
    through against the events, the state read model against a replay and every
    configured projection's checkpoint, all read from one snapshot of the log (agents
    may keep writing); exit non-zero naming the first failure. A projection that cannot be
    reached, or whose file does not match its checkpoint (cut short, edited), fails its
    check after the log's own checks have run and printed. A projection that follows
    another log (the live log's, when this is a backup) is not this log's: it is named
    and skipped, not failed."""
    from writegate.gate.audit.integrity import IntegrityCheck, IntegrityReport, check_integrity

    expected = _anchor_argument(expect_head) if expect_head else None
    settings = ctx.settings()
    with opened(ctx, readonly=True) as gate:
        rows = projection_checkpoints(settings, gate.log)  # before the snapshot
        ours = [r for r in rows if r.other_log is None]
        report = check_integrity(
            gate.log,
            gate.state,
            checkpoints={r.name: r.checkpoint for r in ours if r.checkpoint is not None},
            unreachable={r.name: r.error or "?" for r in ours if r.checkpoint is None},
            expect_head=expected,
        )
    damaged = [f"{r.name}: {r.damage}" for r in ours if r.damage]
    if damaged:
        files = IntegrityCheck("projection files", False, "; ".join(damaged))
        report = IntegrityReport([*report.checks, files], report.head_seq, report.head_hash)
    others = [r.other_log for r in rows if r.other_log]
    if fmt == "json":  # the integrity_report tool's answer, the same fields
        checks = [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in report.checks]
        click.echo(
            orjson.dumps(
                {
                    "ok": report.ok,
                    "head_seq": report.head_seq,
                    "head_hash": report.head_hash,
                    "checks": checks,
                    "other_logs": others,
                }
            ).decode()
        )
    else:
        for check in report.checks:
            click.echo(f"{'ok  ' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
        for other in others:
            click.echo(f"skip  projection of another log: {other}")
        click.echo(f"verified up to seq {report.head_seq}")
    if (failure := report.first_failure) is not None:
        fail(f"{failure.name}: {failure.detail}")
    if anchor and fmt != "json":  # the JSON holds head_seq and head_hash
        click.echo(f"{report.head_seq}:{report.head_hash}")


def _anchor_argument(text: str) -> tuple[int, str]:
    seq, sep, digest = text.partition(":")
    if not sep or not seq.isdigit() or len(digest) != 64:
        fail(f"--expect-head {text!r} is not SEQ:HASH (as printed by verify --anchor)", 2)
    return int(seq), digest
