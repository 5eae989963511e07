"""What a write command prints: a summary a person reads, or the result for scripts.

By default a few lines say what was written, remapped, resolved onto another node,
superseded or held for review, with the seq and the whole ids to act on; ``--format
json`` prints the result exactly as the MCP tool returns it (``gate.dump``), one line — a
refusal's too. A batch's summary is counts, however many items it held. A refusal is one
line on stderr and exit 1 either way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from writegate.cli.render import counted, plain, stores_let_go

if TYPE_CHECKING:
    from pydantic import BaseModel

    from writegate.gate.models import BatchResult, ItemResult
    from writegate.language import Superseded

WRITE_FORMATS = ("text", "json")


def write_format(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--format text|json`` (and ``--json``, the same as ``--format json``)."""
    f = click.option("--json", "as_json", is_flag=True, help="The same as --format json.")(f)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(WRITE_FORMATS),
        default="text",
        show_default=True,
        help="text (a summary) for people; json (the result, one line) for scripts.",
    )(f)


def emit_written(result: BaseModel, fmt: str, as_json: bool = False) -> None:
    """The result as ``--format`` asks; a rejection as one line and exit 1."""
    from writegate.cli.common import emit_result, fail, refusal_line
    from writegate.gate import Rejected

    if fmt == "json" or as_json:
        emit_result(result)
        return
    if isinstance(result, Rejected):
        fail(refusal_line(result))
    for line in summary(result):
        click.echo(line)


def summary(result: BaseModel) -> list[str]:
    """The lines saying what ``result`` did."""
    from writegate.gate.forgetting import ForgetResult
    from writegate.gate.merges.operations import MergeResult, UnmergeResult
    from writegate.gate.models import BatchResult
    from writegate.gate.review import ReviewDecision

    if isinstance(result, BatchResult):
        return _batch(result)
    if isinstance(result, ForgetResult):
        what = "would forget" if result.dry_run else "forgot"
        stores = stores_let_go(result.counts)
        at = f" at seq {result.seq}" if result.seq is not None else ""
        merged = f" and {', '.join(result.merged)} merged with it" if result.merged else ""
        return [
            f"{what} {result.node or 'nothing'}{merged}{at}: "
            f"{counted(len(result.events), 'event')}" + (f"; {stores}" if stores else "")
        ]
    if isinstance(result, MergeResult):
        lines = [
            f"merged {result.merged} into {result.survivor} at seq {result.seq}: "
            f"{counted(result.relationships_moved, 'relationship')} moved"
            + (f", took {', '.join(result.taken)}" if result.taken else ""),
            *_superseded(result.superseded),
            f"  merge {result.merge} (undo: writegate unmerge {result.merge})",
        ]
        return lines
    if isinstance(result, UnmergeResult):
        kept = f"; kept as they are now: {', '.join(result.kept)}" if result.kept else ""
        return [
            f"unmerged {result.restored} from {result.survivor} at seq {result.seq}: "
            f"{counted(result.relationships_restored, 'relationship')} restored{kept}",
            f"  merge {result.merge}",
        ]
    if isinstance(result, ReviewDecision):
        lines = [f"{result.decision} proposal {result.proposal} at seq {result.seq}"]
        if result.result is not None:
            lines += ["  " + line for line in item_lines(result.result)]
        return lines
    return item_lines(result)  # type: ignore[arg-type]


def item_lines(result: ItemResult) -> list[str]:
    """One write's lines: what, where in the log, and what it changed beyond itself."""
    from writegate.gate.models import (
        DeleteNodeResult,
        DeleteRelationshipResult,
        ProposedResult,
        WriteNodeResult,
    )
    from writegate.language import node_identity, relationship_identity

    if isinstance(result, ProposedResult):
        return [
            f"held for review: proposal {result.proposal} ({result.reason}), "
            f"confidence {plain(result.confidence)}, seq {result.seq}",
            f"  a reviewer decides: writegate review approve {result.proposal} (or reject)",
        ]
    if isinstance(result, WriteNodeResult | DeleteNodeResult):
        what = node_identity(result.label, result.merge_keys)
    else:
        what = relationship_identity(
            result.type,
            node_identity(result.from_node.label, result.from_node.merge_keys),
            node_identity(result.to_node.label, result.to_node.merge_keys),
        )
    if isinstance(result, DeleteNodeResult):
        detached = result.relationships_deleted
        also = f", and {counted(detached, 'relationship')}" if detached else ""
        return [f"deleted {what}{also} at seq {result.seq} (event {result.event_id})"]
    if isinstance(result, DeleteRelationshipResult):
        return [f"deleted {what} at seq {result.seq} (event {result.event_id})"]
    if result.status == "unchanged":  # nothing appended: the event that wrote it
        return [
            f"unchanged {what}: version {result.version} holds these values, as written at "
            f"seq {result.seq} (event {result.event_id}); nothing appended"
        ]
    if result.status == "corroborated":
        lines = [
            f"corroborated {what} (still version {result.version}) at seq {result.seq}, "
            f"confidence {plain(result.confidence)}, now {plain(result.corroborated_confidence)} "
            f"with its support (event {result.event_id})"
        ]
    else:
        made = "created" if result.created else f"updated to version {result.version}"
        lines = [
            f"wrote {what} ({made}) at seq {result.seq}, confidence {plain(result.confidence)} "
            f"(event {result.event_id})"
        ]
    if result.remapped_from:
        lines.append(f"  remapped from {result.remapped_from}")
    if isinstance(result, WriteNodeResult):
        if result.resolved_from:
            lines.append(f"  named as {result.resolved_from}: entity resolution found this node")
    else:
        for end, named in (result.resolved_from or {}).items():
            lines.append(f"  {end} end named as {named}: entity resolution found the node")
        lines += [
            f"  stub created: {node_identity(s.label, s.merge_keys)}" for s in result.stubs_created
        ]
    if result.unknown_properties:
        lines.append(f"  not in the schema (allowed): {', '.join(result.unknown_properties)}")
    return lines + _superseded(result.superseded)


def _superseded(superseded: list[Superseded]) -> list[str]:
    return [
        f"  superseded {s.property or 'relationship'}: {plain(s.value)} "
        f"(set by {s.agent} at seq {s.seq}, confidence {plain(s.confidence)})"
        for s in superseded
    ]


def _batch(result: BatchResult) -> list[str]:
    """Counts, never the items: a batch of thousands is a few lines."""
    from writegate.gate.models import ProposedResult, WriteNodeResult, WriteRelationshipResult

    kinds = Counter(_kind(item) for item in result.results)
    written = [
        i for i in result.results if isinstance(i, WriteNodeResult | WriteRelationshipResult)
    ]
    remapped = sum(1 for i in written if i.remapped_from)
    superseded = sum(len(i.superseded) for i in written)
    created = sum(1 for i in written if isinstance(i, WriteNodeResult) and i.created)
    held = [i.proposal for i in result.results if isinstance(i, ProposedResult)]
    did = {"proposed": "held for review", "unchanged": "changed nothing:"}
    lines = [
        f"{did.get(result.status, 'wrote')} a batch of {counted(len(result.results), 'item')} "
        f"at seq {result.first_seq} to {result.last_seq}: "
        + ", ".join(counted(n, kind) for kind, n in kinds.items()),
        f"  created {counted(created, 'node')}; remapped {remapped}, resolved onto existing "
        f"nodes {result.resolved}, values superseded {superseded}, held for review {len(held)}",
    ]
    if held:
        more = f" and {len(held) - 3} more (writegate review list)" if len(held) > 3 else ""
        lines.append(f"  proposals: {', '.join(held[:3])}{more}")
    return lines


def _kind(item: ItemResult) -> str:
    from writegate.gate.models import (
        DeleteNodeResult,
        DeleteRelationshipResult,
        ProposedResult,
        WriteNodeResult,
        WriteRelationshipResult,
    )

    if isinstance(item, ProposedResult):
        return "held write"
    if isinstance(item, DeleteNodeResult):
        return "node deletion"
    if isinstance(item, DeleteRelationshipResult):
        return "relationship deletion"
    what = "node" if isinstance(item, WriteNodeResult) else "relationship"
    if isinstance(item, WriteNodeResult | WriteRelationshipResult) and item.status != "written":
        return f"{item.status} {what}"  # "2 unchanged nodes", "1 corroborated relationship"
    return f"{what} write"
