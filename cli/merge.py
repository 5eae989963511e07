"""``writegate merge`` and ``unmerge``: fold a duplicate node into its survivor, and undo it —
faces over ``Gate.merge_nodes`` / ``unmerge_nodes`` (the reviewer's MCP tools of the same
names), as the operator. The result prints as JSON, a refusal as one line."""

from __future__ import annotations

from typing import Any

import click

from writegate.cli.common import Context, emit_result, opened, parse_assignments, pass_ctx
from writegate.cli.writes import provenance_options


def _given(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


@click.command()
@click.argument("label")
@click.option(
    "-s",
    "--survivor",
    "survivor",
    multiple=True,
    required=True,
    help="Merge key NAME=VALUE of the node that stays (repeatable).",
)
@click.option(
    "-d",
    "--duplicate",
    "duplicate",
    multiple=True,
    required=True,
    help="Merge key NAME=VALUE of the duplicate folded into it (repeatable).",
)
@click.option("--duplicate-label", help="The duplicate's label, if another of LABEL's group.")
@click.option("--reason", help="Why, for the audit trail.")
@provenance_options
@pass_ctx
def merge(
    ctx: Context,
    /,
    label: str,
    survivor: tuple[str, ...],
    duplicate: tuple[str, ...],
    duplicate_label: str | None,
    reason: str | None,
    **prov: Any,
) -> None:
    """Fold a duplicate node into a survivor of LABEL (undo with unmerge).

    Its relationships move to the survivor, its values are taken by each property's
    conflict policy, and its identity becomes an alias later writes land on."""
    with opened(ctx) as gate:
        emit_result(
            gate.merge_nodes(
                actor=ctx.actor,
                label=label,
                survivor_keys=parse_assignments(survivor, "--survivor"),
                duplicate_keys=parse_assignments(duplicate, "--duplicate"),
                **_given(duplicate_label=duplicate_label, reason=reason, **prov),
            )
        )


@click.command()
@click.argument("merge_id", metavar="MERGE")
@click.option("--reason", help="Why, for the audit trail.")
@provenance_options
@pass_ctx
def unmerge(ctx: Context, /, merge_id: str, reason: str | None, **prov: Any) -> None:
    """Undo a merge: the duplicate returns with its values, relationships and writers.

    MERGE is the id merge printed; survivor values written since the merge stay."""
    with opened(ctx) as gate:
        emit_result(
            gate.unmerge_nodes(actor=ctx.actor, merge=merge_id, **_given(reason=reason, **prov))
        )
