"""Tools for long work: start a rebuild, replay, backup, copy or import as a job, watch it,
cancel it, list them (seed 003's job queue; MCP's tasks extension is not in the Python
SDK yet — when it is, the same jobs can be offered through it).

Faces over ``gate.jobs.Jobs``, the same jobs as ``writegate jobs``. They are the policy's
``jobs`` group, which the default roles give to admins only. An agent sees only the jobs
it started unless it is an admin; another agent's job is answered exactly as one that does
not exist (``JOB_NOT_FOUND``). A started job runs on a worker thread of this server and
outlives the call; if the server dies it is interrupted and resumable (``writegate jobs
resume``, or the next start of the same work on the same target).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.jobs import Job, JobFailed, JobNotFound, Jobs, JobView, TargetBusy, visible
from writegate.gate.models import Rejected
from writegate.gate.server.tools import ToolCall, ToolSpec, tool

_ARGS = ConfigDict(extra="forbid", frozen=True)


class JobStartArgs(BaseModel):
    model_config = _ARGS

    kind: Literal["rebuild", "replay", "backup", "copy", "import", "retain", "optimize"] = Field(
        description="rebuild: reset the projection and replay the whole log into it (the "
        "old one is served until the new one is complete); replay: apply the log from its "
        "checkpoint; backup: a verified copy of this server's SQLite log; copy: this "
        "server's log into another database; import: a memory file into this log, every "
        "item a gated write as the caller; retain: forget the personal values the schema's "
        "retention periods have passed, with a values.expired receipt; optimize: merge the "
        "text index's structures (searches seek fewer). backup, copy and import name paths "
        "on the server's machine, retain forgets, optimize holds the write lock: admins only."
    )
    target: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="rebuild, replay: the projection's name in the configuration; backup: "
        "the new file's path; copy: the destination's path or postgresql:// address; "
        "import, retain, optimize: none (their target is this log).",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description='rebuild: {"regate": true} replays through the current schema\'s remaps; '
        'replay: {"from_seq": N, "to_seq": N, "as_of": "<ISO time>"}; backup: {"tokens": '
        '"<path>"}; copy: {"batch": N}; import: {"path": "<file>", "format": "mcp-memory" | '
        '"memorymesh", "method": "<extraction method>", "source": "…", "reliability": 0.5}.',
    )


ADMIN_KINDS = {  # why each is for admins only
    "backup": "name paths on the server's machine",
    "copy": "name paths on the server's machine",
    "import": "name paths on the server's machine",
    "retain": "forget personal values",
    "optimize": "hold the log's write lock while they merge the text index",
}


class JobArgs(BaseModel):
    model_config = _ARGS

    job: StrictInt = Field(ge=1, description="The job's id, from job_start or job_list.")


class JobListArgs(BaseModel):
    model_config = _ARGS

    limit: StrictInt = Field(
        default=50, ge=1, le=500, description="At most this many, newest first."
    )


class JobResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: Literal["ok"] = "ok"
    job: JobView


class JobList(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: Literal["ok"] = "ok"
    jobs: list[JobView]


def _jobs(call: ToolCall) -> Jobs:
    if call.jobs is None:
        raise GateRejection(ErrorCode.INVALID_ARGUMENT, "this server runs no jobs")
    return call.jobs


def _seen(call: ToolCall, job_id: int) -> Job:
    """The job, if the caller may see it; else JOB_NOT_FOUND, as for one that does not exist."""
    found = visible(_jobs(call).table.get(job_id), call.actor.agent, "admin" in call.roles)
    if found is None:
        raise GateRejection(ErrorCode.JOB_NOT_FOUND, f"no job {job_id}", {"job": job_id})
    return found


@tool("jobs", destructive=True)
def job_start(call: ToolCall, args: JobStartArgs) -> JobResult | Rejected:
    """Start long work as a job on this server (a rebuild or replay of a projection, a
    backup, a copy, an import, a retention) and answer at once with its id; follow it with
    job_status. One job per target at a time: an interrupted job doing the same work is
    resumed from its checkpoint instead."""
    jobs = _jobs(call)
    if args.kind in ADMIN_KINDS and "admin" not in call.roles:
        raise GateRejection(
            ErrorCode.POLICY_DENIED,
            f"{args.kind} jobs {ADMIN_KINDS[args.kind]}: admins only",
            {"kind": args.kind},
        )
    fixed = jobs.kinds[args.kind].target if args.kind in jobs.kinds else None
    target = fixed or args.target
    if target is None:
        raise GateRejection(ErrorCode.INVALID_ARGUMENT, f"a {args.kind} job needs a target")
    try:
        job = jobs.start(call.actor, args.kind, target, args.options)
    except TargetBusy as busy:
        held = visible(busy.job, call.actor.agent, "admin" in call.roles)
        raise GateRejection(
            ErrorCode.JOB_TARGET_BUSY,
            f"{target} is held by another job" if held is None else str(busy),
            {"target": target, **({"job": held.id} if held else {})},
        ) from None
    except (ValueError, JobFailed) as exc:  # unknown, or not reachable as named
        raise GateRejection(ErrorCode.INVALID_ARGUMENT, str(exc)) from None
    jobs.detach(job)
    return JobResult(job=JobView.of(job))


@tool("jobs", read_only=True)
def job_status(call: ToolCall, args: JobArgs) -> JobResult | Rejected:
    """One job: its kind and target, who asked and when, progress (events done of total),
    state (running, interrupted, completed, failed, cancelled) and outcome."""
    return JobResult(job=JobView.of(_seen(call, args.job)))


@tool("jobs")
def job_cancel(call: ToolCall, args: JobArgs) -> JobResult | Rejected:
    """Cancel a job: a running one stops at its next batch, an interrupted one at once.
    The projection it was building stays as it was before the job; what an interrupted
    rebuild staged is removed, and its outcome says which files."""
    job = _seen(call, args.job)
    try:
        return JobResult(job=JobView.of(_jobs(call).cancel(job.id)))
    except JobNotFound:
        raise GateRejection(ErrorCode.JOB_NOT_FOUND, f"no job {job.id}", {"job": job.id}) from None


@tool("jobs", read_only=True)
def job_list(call: ToolCall, args: JobListArgs) -> JobList | Rejected:
    """Your jobs, newest first (an admin sees every agent's)."""
    admin = "admin" in call.roles
    table = _jobs(call).table
    listed = table.listed(owner=None if admin else call.actor.agent, limit=args.limit)
    return JobList(jobs=[JobView.of(job) for job in listed])


JOB_TOOLS: tuple[ToolSpec, ...] = (job_start, job_status, job_cancel, job_list)
