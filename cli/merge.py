"""``writegate merge`` and ``unmerge``: fold a duplicate node into its survivor, and undo it —
faces over ``Gate.merge_nodes`` / ``unmerge_nodes`` (the reviewer's MCP tools of the same
names), as the operator. What was done prints as a summary (``--format json``: the
result), a refusal as one line."""

from __future__ import annotations

from typing import Any

import click

from writegate.cli.common import Context, fail, opened, pass_ctx
from writegate.cli.ids import resolve_id
from writegate.cli.nodes import NodeName, deprecated, old_name, parse_node
from writegate.cli.write_options import provenance_options
from writegate.cli.written import emit_written, write_format


def _given(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _nodes(
    words: tuple[str, ...],
    survivor: tuple[str, ...],
    duplicate: tuple[str, ...],
    duplicate_label: str | None,
) -> tuple[NodeName, NodeName]:
    """``SURVIVOR DUPLICATE``, or the old ``LABEL -s KEY=VALUE -d KEY=VALUE``."""
    if not survivor and not duplicate and duplicate_label is None:
        if len(words) != 2:
            fail("merge takes two nodes: SURVIVOR DUPLICATE (Person:name=Ada Person:name=ada)", 2)
        return parse_node(words[0], "SURVIVOR"), parse_node(words[1], "DUPLICATE")
    if len(words) != 1 or not survivor or not duplicate:
        fail("merge: name the nodes as SURVIVOR DUPLICATE (or the old LABEL -s … -d …)", 2)
    kept = old_name(words[0], survivor, "--survivor")
    folded = old_name(duplicate_label or words[0], duplicate, "--duplicate")
    deprecated(f"merge {words[0]} -s … -d …", f"merge {kept.typed} {folded.typed}")
    return kept, folded


@click.command()
@click.argument("nodes", nargs=-1, required=True, metavar="SURVIVOR DUPLICATE")
@click.option("-s", "--survivor", "survivor", multiple=True, hidden=True)
@click.option("-d", "--duplicate", "duplicate", multiple=True, hidden=True)
@click.option("--duplicate-label", hidden=True)
@click.option("--reason", help="Why, for the audit trail.")
@provenance_options
@write_format
@pass_ctx
def merge(
    ctx: Context,
    /,
    nodes: tuple[str, ...],
    survivor: tuple[str, ...],
    duplicate: tuple[str, ...],
    duplicate_label: str | None,
    reason: str | None,
    fmt: str,
    as_json: bool,
    **prov: Any,
) -> None:
    """Fold a duplicate node into a survivor (undo with unmerge).

    SURVIVOR and DUPLICATE are nodes (Label:key=value or Label{json keys}) of one label
    or one identity group. The duplicate's relationships move to the survivor, its values
    are taken by each property's conflict policy, and its identity becomes an alias later
    writes land on."""
    kept, folded = _nodes(nodes, survivor, duplicate, duplicate_label)
    with opened(ctx) as gate:
        result = gate.merge_nodes(
            actor=ctx.actor,
            label=kept.label,
            survivor_keys=kept.keys,
            duplicate_keys=folded.keys,
            **_given(
                duplicate_label=folded.label if folded.label != kept.label else None,
                reason=reason,
                **prov,
            ),
        )
    emit_written(result, fmt, as_json)


@click.command()
@click.argument("merge_id", metavar="MERGE")
@click.option("--reason", help="Why, for the audit trail.")
@provenance_options
@write_format
@pass_ctx
def unmerge(
    ctx: Context, /, merge_id: str, reason: str | None, fmt: str, as_json: bool, **prov: Any
) -> None:
    """Undo a merge: the duplicate returns with its values, relationships and writers.

    MERGE is the id merge printed, or a prefix naming one merge; survivor values written
    since the merge stay."""
    with opened(ctx) as gate:
        merge_id = resolve_id(gate.log, "merge", merge_id)
        result = gate.unmerge_nodes(
            actor=ctx.actor, merge=merge_id, **_given(reason=reason, **prov)
        )
    emit_written(result, fmt, as_json)
