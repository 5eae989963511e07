"""``writegate status|replay|rebuild|follow``: thin faces over ``projections.runner``.

Projections are named in ``writegate.toml`` (see ``cli.config``). ``status`` also lists the
gate's own inline read model (``state``), which is never behind the log.
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from writegate.cli.common import SEQ, Context, fail, opened, parse_time, pass_ctx
from writegate.cli.config import GraphConfig, ProjectionConfig, Settings
from writegate.cli.render import console, counted, format_option
from writegate.cli.tables import Rows
from writegate.eventlog import EventLogError, Log, open_log
from writegate.projections.contract import ProjectionError, Projector
from writegate.projections.runner import (
    ProjectionStatus,
    follow,
    status,
)

INLINE = "state"


def _projector(settings: Settings, name: str, log: Log) -> Projector:
    config = settings.projections.get(name)
    if config is None:
        known = ", ".join(sorted(settings.projections)) or "none configured"
        fail(f"no projection named {name!r} in the configuration ({known})", 2)
    try:
        return config.open(name, log)
    except (OSError, ValueError) as exc:
        fail(f"{name}: cannot open {config.describe()}: {exc}")


@contextmanager
def progress_bar(
    total: int, label: str, unit: str = "events", *, shown: bool = True
) -> Iterator[Any]:
    """A bar on stderr (``shown=False``: none, for a script reading stderr's one line)."""
    if not shown:
        yield lambda _n: None
        return
    columns = (
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:>9,.0f} " + unit + "/s"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(label, total=max(total, 1), rate=0.0)

        def advance(n: int) -> None:
            bar.advance(task, n)
            elapsed = bar.tasks[task].elapsed or 0.0
            bar.update(task, rate=bar.tasks[task].completed / elapsed if elapsed else 0.0)

        yield advance


def _asked_once(config: ProjectionConfig) -> ProjectionConfig:
    """A look, not a replay: one attempt per store, no retries, so a store that is down
    is reported as such at once (within the connect timeout)."""
    if isinstance(config, GraphConfig):
        return config.model_copy(update={"retry_seconds": 0.0})
    return config


def projection_checkpoints(settings: Settings, log: Log) -> list[ProjectionStatus]:
    """Every configured projection's checkpoint (``None`` with the error if it cannot be
    asked), each store asked once."""
    projectors: dict[str, Projector] = {}
    failed: list[ProjectionStatus] = []
    for name, configured in settings.projections.items():
        try:
            projectors[name] = _asked_once(configured).open(name, log)
        except (OSError, ValueError, ProjectionError) as exc:
            failed.append(ProjectionStatus(name, None, log.head()[0], f"cannot open: {exc}"))
    try:
        found = {row.name: row for row in [*status(log, projectors), *failed]}
        return [found[name] for name in settings.projections]
    finally:
        for projector in projectors.values():
            projector.close()


def checkpoint_of(settings: Settings, name: str, log: Log) -> Callable[[], int]:
    """Asks projection NAME's checkpoint once each call (opened and closed again: the
    answer of a store that may be down, from any thread)."""
    config = _asked_once(settings.projections[name])

    def ask() -> int:
        projector = config.open(name, log)
        try:
            return projector.checkpoint()
        finally:
            projector.close()

    return ask


@click.command("status")
@format_option("table", "json", "jsonl")
@pass_ctx
def status_command(ctx: Context, fmt: str) -> None:
    """Each projection's checkpoint, the log head and the lag."""
    settings = ctx.settings()
    with opened(ctx, readonly=True) as gate:
        rows = projection_checkpoints(settings, gate.log)
        head = gate.log.head()[0]
    if fmt in ("json", "jsonl"):
        inline = {
            "name": INLINE,
            "store": f"inline in {ctx.where}",
            "checkpoint": head,
            "head": head,
            "lag": 0,
            "error": None,
        }
        lines = [inline, *(_row(settings, r) for r in rows)]
        if fmt == "json":
            click.echo(json.dumps({"head": head, "projections": lines}))
        else:
            for line in lines:
                click.echo(json.dumps(line))
        _status_failure(rows)
        return
    table = Rows(
        "projections",
        ("projection", "store", "checkpoint", "head", "lag"),
        whole={"projection", "checkpoint", "head"},
    )
    table.add_row(INLINE, f"inline in {ctx.where}", str(head), str(head), "0")
    for row in rows:
        store = settings.projections[row.name].describe()
        if row.error:
            lag = Text(f"unreachable: {row.error}", style="red")
            table.add_row(row.name, store, "?", str(row.head), lag)
        elif problem := _problem(row):
            bad = Text(problem, style="red")
            table.add_row(row.name, store, str(row.checkpoint), str(row.head), bad)
        else:
            table.add_row(row.name, store, str(row.checkpoint), str(row.head), str(row.lag))
    console().print(table)
    _status_failure(rows)


def _problem(row: ProjectionStatus) -> str | None:
    """What is wrong with a store that could be asked: another log's, or a damaged file."""
    if row.other_log:
        return f"another log: {row.other_log}"
    return f"damaged: {row.damage}" if row.damage else None


def _status_failure(rows: list[ProjectionStatus]) -> None:
    if any(row.error for row in rows):
        fail("some projections could not be reached")
    if any(row.other_log for row in rows):
        fail("some projections follow another log (rebuild them to follow this one)")
    if any(row.damage for row in rows):
        fail("some projection files do not match their checkpoints (replay or rebuild them)")


def _row(settings: Settings, row: ProjectionStatus) -> dict[str, Any]:
    return {
        "name": row.name,
        "store": settings.projections[row.name].describe(),
        "checkpoint": row.checkpoint,
        "head": row.head,
        "lag": row.lag,
        "error": f"unreachable: {row.error}" if row.error else _problem(row),
    }


@click.command("replay")
@click.argument("name")
@click.option(
    "--from-seq", type=click.IntRange(1, SEQ.max), help="Re-apply from this seq (idempotent)."
)
@click.option("--to-seq", type=SEQ, help="Stop at this seq.")
@click.option("--as-of", callback=parse_time, help="Build the store as it was at this time.")
@pass_ctx
def replay_command(
    ctx: Context, name: str, from_seq: int | None, to_seq: int | None, as_of: datetime | None
) -> None:
    """Apply the log to projection NAME (from its checkpoint by default). It runs as a job
    you wait for (see writegate jobs): one per projection at a time, resumed by the next
    replay if this one dies."""
    if to_seq is not None and as_of is not None:
        fail("give --to-seq or --as-of, not both", 2)
    from writegate.cli.job_kinds import ReplayOptions
    from writegate.cli.jobs import run_job

    options = ReplayOptions(from_seq=from_seq, to_seq=to_seq, as_of=as_of)
    with opened(ctx) as gate:
        run_job(ctx, gate, "replay", name, options)


@click.command("rebuild")
@click.argument("name")
@click.option(
    "--regate",
    is_flag=True,
    help="Replay history through the current schema's remaps (the log is not changed).",
)
@pass_ctx
def rebuild_command(ctx: Context, name: str, regate: bool) -> None:
    """Reset projection NAME and replay the whole log into it. It runs as a job you wait
    for (see writegate jobs): killed half way, the next rebuild of NAME (or writegate jobs
    resume ID) continues from its last checkpoint. A JSONL or PROV-O file is replaced only
    when the rebuild completes, so a cancelled or failed one leaves it as it was; a graph
    server's store is rebuilt in place."""
    from writegate.cli.job_kinds import RebuildOptions
    from writegate.cli.jobs import run_job

    with opened(ctx) as gate:
        run_job(ctx, gate, "rebuild", name, RebuildOptions(regate=regate))


@click.command("follow")
@click.option(
    "--interval",
    type=click.FloatRange(0.01, 60),
    default=0.2,
    show_default=True,
    help="When idle: seconds between polls of a SQLite log; on PostgreSQL, where each "
    "commit's notification wakes the follower, the longest wait before reading anyway.",
)
@click.option("--only", "names", multiple=True, help="Follow only these projections.")
@click.option(
    "--retry-for",
    type=click.FloatRange(0, 86400),
    default=60,
    show_default=True,
    help="Seconds to keep reconnecting to a log whose database went away before giving up.",
)
@pass_ctx
def follow_command(ctx: Context, interval: float, names: tuple[str, ...], retry_for: float) -> None:
    """Keep projections caught up as events arrive, until SIGINT or SIGTERM."""
    settings = ctx.settings()
    chosen = names or tuple(settings.projections)
    if not chosen:
        fail("no projections configured (writegate.toml [projections.NAME])", 2)
    stop = threading.Event()

    def request_stop(signum: int, _frame: Any) -> None:
        click.echo(f"stopping after the current batch ({signal.Signals(signum).name})", err=True)
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    log = open_log(ctx.db, create=False)
    projectors = {name: _projector(settings, name, log) for name in chosen}
    idle = f"every {interval}s when idle" if ctx.db_file else "woken by each commit"
    click.echo(f"following {', '.join(chosen)} ({idle})", err=True)

    def reported(name: str, count: int, checkpoint: int) -> None:
        click.echo(f"{name}: +{counted(count, 'event')}, checkpoint {checkpoint}", err=True)

    def lost(reason: str | None) -> None:
        if reason is None:
            click.echo(f"{ctx.where}: reconnected", err=True)
        else:
            # however it showed (a read, the listener, a new connection refused): it is gone
            detail = reason.removeprefix(f"{ctx.where}: ")
            lost_as = "the connection was lost ("
            if detail.startswith(lost_as) and detail.endswith(")"):
                detail = detail[len(lost_as) : -1]
            click.echo(
                f"{ctx.where}: the connection was lost ({detail}); "
                f"reconnecting (for up to {retry_for:g} s)",
                err=True,
            )

    try:
        follow(
            log,
            projectors,
            stop=stop,
            interval=interval,
            on_batch=reported,
            retry_for=retry_for,
            on_lost=lost,
        )
    except (ProjectionError, EventLogError) as exc:
        fail(str(exc))
    finally:
        for projector in projectors.values():
            projector.close()
        log.close()
    click.echo("stopped", err=True)
