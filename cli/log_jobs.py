"""The kinds of job that work on a log itself: ``backup`` and ``copy`` (whose target is
their destination), ``import`` and ``retain`` (whose target is the log they write to). Like the
projection kinds (``cli.job_kinds``), they serve both the foreground commands (a job you
wait for) and a server's ``job_start``.

What each leaves when cancelled, or when its process dies:

* a backup is one snapshot of the log, so it cannot continue another process's: it is made
  under a name of the job's (``.DEST.jobN.partial``) that a resumption, a cancellation or a
  failure removes, and becomes DEST only once it verifies;
* a copy into a new SQLite file is made the same way (``.DEST.jobN.copying``) and continued
  from its head when resumed (whatever it holds is a checked prefix of the source); a copy
  into PostgreSQL, or continuing an earlier copy, is made in place, in checked batches;
* an import keeps what it imported (every item is a gated write); resumed, it goes on
  after the last item it recorded, its batches the same, so nothing is written twice;
* a retention is one transaction: it has forgotten all it counted, or nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from writegate.cli.render import counted, stores_let_go
from writegate.eventlog import Actor, EventLog, EventLogError, Log, open_log
from writegate.eventlog.copying import copy_log
from writegate.eventlog.erasing import forgettings_after
from writegate.eventlog.opening import is_postgres
from writegate.gate import Gate, Rejected
from writegate.gate.backup import BackupFailed, BackupReport, backup, remove_partial
from writegate.gate.errors import GateRejection
from writegate.gate.imports import CHUNK, Format, ImportSummary, import_file, items_in
from writegate.gate.jobs import Job, JobCancelled, JobFailed, Kind, Report
from writegate.gate.rejections import forget_rejections
from writegate.gate.retention import RetainResult
from writegate.projections.state import StateProjection

Seen = Callable[[int, int], None]  # (done, total): a progress bar, in the foreground
_OPTIONS = ConfigDict(extra="forbid", frozen=True)


class BackupOptions(BaseModel):
    model_config = _OPTIONS

    tokens: str | None = None  # the tokens file to copy beside it (default: the log's)


class CopyOptions(BaseModel):
    model_config = _OPTIONS

    batch: int = Field(default=1000, ge=1, le=100_000)


class ImportOptions(BaseModel):
    model_config = _OPTIONS

    path: str  # the file, on the machine that runs the job
    format: Format
    method: str
    source: str | None = None
    reliability: float = Field(default=0.5, ge=0, le=1)


class RetainOptions(BaseModel):
    """A retention takes no options: its periods are the schema's."""

    model_config = _OPTIONS


def destination(address: str) -> str:
    """A copy's or backup's target: a file by its whole path, a database by its address
    without a password (jobs are listed to admins; libpq finds it again in PGPASSWORD or
    ~/.pgpass when the job is resumed)."""
    if not is_postgres(address):
        return str(Path(address).resolve())
    parts = urlsplit(address)
    if parts.password is None:
        return address
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=user + netloc))


def _made_as(target: str, job: Job, suffix: str) -> Path:
    dest = Path(target)
    return dest.with_name(f".{dest.name}.job{job.id}.{suffix}")


def _told(report: Report, seen: Seen | None) -> Seen:
    """Progress to the bar and the job; the last step always to the job, so that a
    cancellation asked meanwhile is heard before the work is kept."""

    def progress(done: int, total: int) -> None:
        if seen:
            seen(done, total)
        report(done, total, force=done >= total)

    return progress


def backup_kind(
    log: Log, seen: Seen | None = None, made: Callable[[BackupReport], None] | None = None
) -> Kind:
    """``backup DEST``: progress in pages of the log's file."""

    def total(target: str, _options: str) -> int:
        if not isinstance(log, EventLog):
            raise ValueError(
                "backup copies a SQLite log; a log on PostgreSQL is backed up by PostgreSQL "
                "(pg_dump), or copied to a file with `writegate copy`"
            )
        if Path(target).exists():
            raise BackupFailed(f"{target} exists (a backup never overwrites)")
        return int(log.connection().execute("PRAGMA page_count").fetchone()[0])

    def run(job: Job, report: Report) -> str:
        assert isinstance(log, EventLog)  # total() refused any other
        options = BackupOptions.model_validate_json(job.options)
        tokens = Path(options.tokens) if options.tokens else None
        partial = _made_as(job.target, job, "partial")
        try:
            done = backup(
                log, job.target, tokens=tokens, partial=partial, progress=_told(report, seen)
            )
        except JobCancelled:
            raise JobCancelled(f"{job.target} was not made; nothing is left behind") from None
        except (BackupFailed, EventLogError, OSError) as exc:
            raise JobFailed(str(exc)) from exc
        if made:
            made(done)
        return (
            f"backed up {log.describe()} to {done.path} ({done.size:,} bytes); "
            f"the copy verifies up to seq {done.head_seq}"
        )

    def abandon(job: Job) -> None:
        remove_partial(_made_as(job.target, job, "partial"))

    return Kind(options=BackupOptions, total=total, run=run, abandon=abandon)


def copy_kind(
    log: Log,
    seen: Seen | None = None,
    address: str | None = None,
    made: Callable[[tuple[int, str, int]], None] | None = None,
) -> Kind:
    """``copy DEST`` of ``log`` (the source): progress in events. ``address``: DEST as the
    operator gave it (with its password), for a job whose target it is; ``made``: told
    the copy's head and how many forgettings recorded since DEST's head it applied."""

    def opened(job: Job, into: str) -> Log:
        """``into``: the staging file, the file, or the database (as the operator gave it,
        with its password, when this job is that copy)."""
        given = address is not None and destination(address) == job.target
        where = address if given and address and is_postgres(address) else into
        return open_log(where, inline=[StateProjection()])

    def total(target: str, _options: str) -> int:
        if target in (log.describe(), destination(log.describe())):
            raise ValueError(f"{log.describe()} is both SOURCE and DEST")
        return log.head()[0]

    def run(job: Job, report: Report) -> str:
        options = CopyOptions.model_validate_json(job.options)
        staged = not is_postgres(job.target) and not Path(job.target).exists()
        into = str(_made_as(job.target, job, "copying")) if staged else job.target
        try:
            with opened(job, into) as dst:
                before = dst.head()[0]
                seq, digest = copy_log(
                    log,
                    dst,
                    batch=options.batch,
                    progress=_told(report, seen),
                    beside=forget_rejections,  # a forgetting since its head: its refusals too
                )
                applied = forgettings_after(dst, before) if before else 0
            if staged:
                os.replace(into, job.target)
                remove_partial(Path(into))  # what the closed copy may leave beside it
        except JobCancelled:
            if staged:
                remove_partial(Path(into))
                raise JobCancelled(f"{job.target} was not made; nothing is left behind") from None
            raise JobCancelled(
                f"{job.target} holds {log.describe()} up to seq {report.done} (checked "
                "batches); copy again to continue"
            ) from None
        except (EventLogError, OSError) as exc:
            if staged:
                remove_partial(Path(into))
            raise JobFailed(str(exc)) from exc
        if made:
            made((seq, digest, applied))
        return f"copied {log.describe()} to {job.target}: head {seq}{_applied(applied)}"

    def abandon(job: Job) -> None:
        remove_partial(_made_as(job.target, job, "copying"))

    return Kind(options=CopyOptions, total=total, run=run, abandon=abandon)


def _applied(forgettings: int) -> str:
    """What a continued copy says of the forgettings it carried out on itself."""
    if not forgettings:
        return ""
    return f"; {counted(forgettings, 'forgetting')} recorded since its head applied to it"


def import_kind(
    gate: Gate, seen: Seen | None = None, imported: Callable[[ImportSummary], None] | None = None
) -> Kind:
    """``import FORMAT PATH`` into ``gate``'s log, as the job's owner: progress in items."""

    def total(_target: str, options: str) -> int:
        wanted = ImportOptions.model_validate_json(options)
        if not Path(wanted.path).is_file():
            raise ValueError(f"{wanted.path}: no such file")
        try:
            return items_in(gate, Path(wanted.path), wanted.format)
        except GateRejection as exc:  # the file cannot be imported: no job is started
            raise ValueError(f"{exc.code}: {exc.message}") from None

    def run(job: Job, report: Report) -> str:
        options = ImportOptions.model_validate_json(job.options)
        told = _told(report, seen)
        done = [job.done - job.done % CHUNK]  # whole batches, as import_file goes on

        def progress(items: int) -> None:
            done[0] += items
            told(done[0], job.total)

        try:
            summary = import_file(
                gate,
                options.path,
                options.format,
                extraction_method=options.method,
                source=options.source,
                reliability=options.reliability,
                actor=Actor(agent=job.owner, session=job.session, transport=job.transport),
                progress=progress,
                after=job.done,
            )
        except JobCancelled:
            raise JobCancelled(
                f"imported {done[0]:,} of {counted(job.total, 'item')} of {options.path} "
                "(each a gated write, kept); import it again to continue"
            ) from None
        except OSError as exc:
            raise JobFailed(f"{options.path}: {exc}") from exc
        if imported:
            imported(summary)
        resumed = f"resumed job {job.id} after item {job.done:,}: " if job.done else ""
        return (
            f"{resumed}{options.path}: accepted {summary.accepted}, rejected "
            f"{summary.rejected}, malformed {summary.malformed}; wrote "
            f"{counted(summary.events_appended, 'event')}"
        )

    return Kind(options=ImportOptions, total=total, run=run, target=gate.log.describe())


def retain_kind(gate: Gate, made: Callable[[RetainResult], None] | None = None) -> Kind:
    """``retain`` on ``gate``'s log, as the job's owner: the values the schema's retention
    periods have passed (counted on claiming), forgotten in one transaction with its
    receipt — so a job cancelled or killed before it commits has forgotten nothing."""

    def total(_target: str, _options: str) -> int:
        planned = gate.retain(dry_run=True)
        if isinstance(planned, Rejected):  # no schema: refused as the command refuses it
            raise JobFailed(f"{planned.error_code}: {planned.message}")
        return planned.values

    def run(job: Job, report: Report) -> str:
        report(0, job.total, force=True)  # a cancellation asked before it began is heeded
        owner = Actor(agent=job.owner, session=job.session, transport=job.transport)
        result = gate.retain(actor=owner)
        if isinstance(result, Rejected):
            raise JobFailed(result.message)
        report.done = report.total = result.values  # kept: too late to heed a cancellation
        if made:
            made(result)
        return retained(result)

    return Kind(options=RetainOptions, total=total, run=run, target=gate.log.describe())


def retained(result: RetainResult) -> str:
    """The one line a retention ends with (the job's outcome, the command's output)."""
    what = "would expire" if result.dry_run else "expired"
    stores = stores_let_go(result.counts)
    at = f" at seq {result.seq}" if result.seq is not None else ""
    policy = ", ".join(f"{name} {period}" for name, period in result.policy.items())
    return (
        f"{what} {counted(result.values, 'value')}{at}: {counted(len(result.events), 'event')}"
        + (f"; {stores}" if stores else "")
        + (f" (retention: {policy})" if policy else " (the schema declares no retention)")
    )


def log_kinds(gate: Gate, seen: Seen | None = None) -> dict[str, Kind]:
    """Every kind on the log, for a server's ``job_start`` and ``writegate jobs resume``."""
    from writegate.cli.optimize import optimize_kind  # a command's module: read on use
    from writegate.cli.retract import retract_kind

    return {
        "backup": backup_kind(gate.log, seen),
        "copy": copy_kind(gate.log, seen),
        "import": import_kind(gate, seen),
        "retain": retain_kind(gate),
        "optimize": optimize_kind(gate),
        "retract": retract_kind(gate),
    }
