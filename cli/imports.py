"""``writegate import …`` and ``schema import-memorymesh``: faces over ``gate.imports``."""

from __future__ import annotations

import json
from pathlib import Path

import click
import yaml

from writegate.cli.common import Context, fail, opened, pass_ctx
from writegate.cli.render import counted
from writegate.cli.stores import progress_bar
from writegate.cli.written import write_format
from writegate.gate import Gate
from writegate.gate.imports import Format, ImportSummary, import_file
from writegate.gate.memorymesh import memorymesh_schema


def _print(summary: ImportSummary) -> None:
    verb = "would write" if summary.dry_run else "wrote"
    click.echo(
        f"{summary.file}: {counted(summary.lines, 'line')}, {counted(summary.items, 'item')}; "
        f"accepted {summary.accepted} (remapped {summary.remapped}, resolved to existing "
        f"nodes {summary.resolved}), "
        f"rejected {summary.rejected}, malformed {summary.malformed}; "
        f"{verb} {counted(summary.events_appended, 'event')}"
    )
    for problem in summary.problems:
        click.echo(f"  line {problem.line}: {problem.error_code}: {problem.message}", err=True)


def _options(command: click.Command) -> click.Command:
    """The shared parameters, added to an existing command (click appends them in order)."""
    for option in [
        click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path)),
        click.option(
            "--method",
            required=True,
            help="Extraction method to record (sets the confidence: api, parsed, manual, llm).",
        ),
        click.option("--source", help="Source to record (default: the file's name)."),
        click.option("--reliability", type=click.FloatRange(0, 1), default=0.5, show_default=True),
        click.option("--dry-run", is_flag=True, help="Report what would happen; write nothing."),
    ]:
        command = option(command)
    return write_format(command)  # type: ignore[return-value]


def _as_job(
    ctx: Context,
    gate: Gate,
    path: Path,
    kind: Format,
    method: str,
    source: str | None,
    reliability: float,
) -> ImportSummary:
    """The import as a job on the log, waited for (``cli.log_jobs``): killed, it is resumed
    by running it again, after the last item it recorded."""
    from writegate.cli.jobs import Bar, run_kind
    from writegate.cli.log_jobs import ImportOptions, import_kind
    from writegate.gate.jobs import Jobs

    summaries: list[ImportSummary] = []
    bar = Bar()
    jobs = Jobs(gate.log, {"import": import_kind(gate, bar.seen, summaries.append)})
    options = ImportOptions(
        path=str(path.resolve()),
        format=kind,
        method=method,
        source=source,
        reliability=reliability,
    )
    run_kind(jobs, bar, ctx, "import", gate.log.describe(), options, echo=False)
    return summaries[0]


@click.group("import")
def import_group() -> None:
    """Bring an existing agent memory under the gate (every item a gated write)."""


def _import_command(kind: Format, help_text: str) -> click.Command:
    """``writegate import FORMAT PATH``: a face over ``gate.imports.import_file``."""

    @pass_ctx
    def command(
        ctx: Context,
        path: Path,
        method: str,
        source: str | None,
        reliability: float,
        dry_run: bool,
        fmt: str,
        as_json: bool,
    ) -> None:
        with opened(ctx) as gate:
            if dry_run:  # writes nothing: no job holds the log for it
                total = sum(1 for line in path.open("rb") if line.strip())
                with progress_bar(total, f"rehearse {path.name}") as advance:
                    summary = import_file(
                        gate,
                        path,
                        kind,
                        extraction_method=method,
                        source=source,
                        reliability=reliability,
                        actor=ctx.actor,
                        dry_run=True,
                        progress=advance,
                    )
            else:
                summary = _as_job(ctx, gate, path, kind, method, source, reliability)
        if as_json or fmt == "json":
            click.echo(json.dumps(summary.model_dump(mode="json"), sort_keys=True))
        else:
            _print(summary)
        if summary.rejected or summary.malformed:  # a script must not take it for a success
            verb = "would reject" if dry_run else "rejected"
            items = counted(summary.rejected, "item")
            malformed = counted(summary.malformed, "malformed line")
            fail(f"{path}: {verb} {items}, {malformed} of {summary.lines}")

    command.__doc__ = help_text
    return _options(click.command(kind)(command))


import_group.add_command(
    _import_command(
        "mcp-memory", "The official MCP memory server's JSONL (entity and relation lines)."
    )
)
import_group.add_command(_import_command("memorymesh", "MemoryMesh's JSONL (node and edge lines)."))


@click.command("import-memorymesh")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the converted schema here (YAML) instead of publishing it.",
)
@click.option("--force", is_flag=True, help="Publish even if it strands or invalidates live data.")
@write_format
@pass_ctx
def schema_import_memorymesh(
    ctx: Context, folder: Path, output: Path | None, force: bool, fmt: str, as_json: bool
) -> None:
    """Convert MemoryMesh *.schema.json files into one schema and publish it to the log."""
    from writegate.cli.schema import publish

    try:
        document = memorymesh_schema(folder)
    except (ValueError, OSError) as exc:
        fail(str(exc))
    if output is not None:
        body = document.model_dump(mode="json", by_alias=True, exclude_none=True)
        output.write_text(yaml.safe_dump(body, sort_keys=False))
        click.echo(f"wrote {len(document.nodes)} labels to {output}")
        return
    with opened(ctx) as gate:
        publish(gate.publish_schema(document, actor=ctx.actor, force=force), fmt, as_json)
