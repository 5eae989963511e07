"""The kinds of job the ``writegate`` command can run: rebuild and replay of a configured
projection. ``gate.jobs`` runs jobs without knowing what they do; these are what they do,
here because only ``cli`` may know both the configuration and the projectors. The same
kinds serve ``writegate rebuild|replay`` (a job run in the foreground) and a server's
``job_start`` (run on its worker thread).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from writegate.cli.config import Settings
from writegate.cli.render import counted
from writegate.eventlog import one_line
from writegate.gate import Gate
from writegate.gate.jobs import Job, JobCancelled, JobFailed, Kind, Report
from writegate.projections.contract import Projector, Staging
from writegate.projections.regate import Regater
from writegate.projections.runner import ReplayResult, check_follows, kept, rebuild, replay

Seen = Callable[[int, int], None]  # (events done, total): a progress bar, in the foreground


class RebuildOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    regate: bool = False  # through the current schema's remaps


class ReplayOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    from_seq: int | None = None
    to_seq: int | None = None
    as_of: datetime | None = None


def described(result: ReplayResult, job: Job | None = None) -> str:
    """The one line a replay or rebuild ends with (the job's outcome, the command's output)."""
    how = " (reset first)" if result.reset else ""
    if result.resumed_from is not None and job is not None:
        how = f" (resumed job {job.id} from seq {result.resumed_from})"
    notes = "".join(f"note: {line}\n" for line in result.notes)  # a file repaired, a log adopted
    return notes + (
        f"{result.name}: applied {counted(result.applied, 'event')}{how} in "
        f"{result.seconds:.2f}s ({result.rate:,.0f} events/s); checkpoint {result.checkpoint}"
    )


def kinds(settings: Settings, gate: Gate, seen: Seen | None = None) -> dict[str, Kind]:
    """``rebuild`` and ``replay`` over ``settings``' projections, on ``gate``'s log."""
    log = gate.log

    def opened(name: str) -> Projector:
        config = settings.projections.get(name)
        if config is None:
            known = ", ".join(sorted(settings.projections)) or "none configured"
            raise ValueError(f"no projection named {name!r} in the configuration ({known})")
        try:
            return config.open(name, log)
        except (OSError, ValueError) as exc:
            raise JobFailed(f"{name}: cannot open {config.describe()}: {exc}") from exc

    def told(report: Report, projector: Projector, total: int) -> Callable[[int], None]:
        def progress(_applied: int) -> None:
            done = kept(projector)  # not what a staged model holds before it stores it
            if seen:
                seen(done, total)
            report(done, total)

        return progress

    def rebuild_total(name: str, _options: str) -> int:
        opened(name).close()  # an unknown or unopenable projection is refused before claiming
        return log.head()[0]

    def run_rebuild(job: Job, report: Report) -> str:
        options = RebuildOptions.model_validate_json(job.options)
        regater = _regater(gate) if options.regate else None
        projector = opened(job.target)
        try:
            total = log.head()[0]
            result = rebuild(
                log,
                projector,
                regater=regater,
                batch=settings.projections[job.target].batch,
                progress=told(report, projector, total),
                resume_from=job.done if report.resuming else None,
            )
            report.reached(result.checkpoint, total)
        except JobCancelled:
            if hasattr(projector, "staged"):  # the staging was dropped; the old one serves
                raise JobCancelled(f"{job.target} is as it was before it") from None
            raise JobCancelled(  # a store rebuilt in place (a graph server): say where it is
                f"{job.target} is rebuilt in place and holds the log up to seq "
                f"{projector.checkpoint()}; rebuild or replay it to complete it"
            ) from None
        finally:
            projector.close()
        return described(result, job)

    def replay_total(name: str, options: str) -> int:
        wanted = ReplayOptions.model_validate_json(options)
        projector = opened(name)
        try:
            check_follows(log, projector)  # another log's store: refused before claiming
            return max((wanted.to_seq or log.head()[0]) - projector.checkpoint(), 0)
        finally:
            projector.close()

    def run_replay(job: Job, report: Report) -> str:
        options = ReplayOptions.model_validate_json(job.options)
        projector = opened(job.target)
        try:
            result = replay(
                log,
                projector,
                # a resumed replay goes on from its checkpoint, not again from --from-seq
                from_seq=None if report.resuming else options.from_seq,
                to_seq=options.to_seq,
                as_of=options.as_of,
                batch=settings.projections[job.target].batch,
                progress=told(report, projector, job.total),
            )
            report.reached(result.checkpoint, job.total)
        except JobCancelled:
            raise JobCancelled(
                f"{job.target} stopped at checkpoint {projector.checkpoint()}; "
                "replay it to continue"
            ) from None
        finally:
            projector.close()
        return described(result)

    def abandoned(job: Job) -> str | None:
        """What a dead rebuild (or a replay that went back in time) staged, removed; where a
        store rebuilt in place was left."""
        try:
            projector = opened(job.target)
        except Exception as exc:  # gone from the configuration, or its store unreachable
            return f"what it left was not looked at ({one_line(exc)})"
        try:
            if isinstance(projector, Staging):
                return _removed(projector.drop_staged())
            if job.kind == "rebuild":
                return (
                    f"{job.target} is rebuilt in place and holds the log up to seq "
                    f"{projector.checkpoint()}; rebuild or replay it to complete it"
                )
            return None
        finally:
            projector.close()

    return {
        "rebuild": Kind(RebuildOptions, rebuild_total, run_rebuild, abandon=abandoned),
        "replay": Kind(ReplayOptions, replay_total, run_replay, abandon=abandoned),
    }


def _removed(files: list[tuple[Path, int]]) -> str | None:
    """The files a cancellation removed, in one clause (None: there were none)."""
    if not files:
        return None
    names = ", ".join(path.name for path, _ in files)
    return f"removed what it staged: {names} ({sum(size for _, size in files):,} bytes)"


def _regater(gate: Gate) -> Regater:
    refreshed = gate.refresh_schema_cache()
    if refreshed.status != "refreshed":
        raise JobFailed(
            f"--regate needs the current schema: {getattr(refreshed, 'message', refreshed)}"
        )
    return Regater(gate.current_schema().registry)
