"""The auditor's view of duplicates: every write entity resolution landed on a node the
graph held (``resolved_from`` in its event), every write it refused as a probable
duplicate (``POSSIBLE_DUPLICATE`` in the rejections table: a refusal appends no event),
and every merge of two nodes and its undoing (``nodes.merged`` / ``nodes.unmerged``).
A refusal keeps what was asked and the candidates with the scorer's reasons (its details),
so a reviewer sees the two side by side. Reads only."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from writegate.eventlog import Log
from writegate.eventlog.events import format_timestamp
from writegate.gate.errors import ErrorCode
from writegate.gate.rejections import RejectionLog
from writegate.language import NodesMerged, NodesUnmerged, NodeWritten, payload_of

_OUT = ConfigDict(extra="forbid", frozen=True)
_READ = ConfigDict(extra="ignore", frozen=True)  # a recorded refusal read back: what it says


class DuplicateAsked(BaseModel):
    """The write refused as a probable duplicate, as its writer named it."""

    model_config = _READ

    label: str
    merge_keys: dict[str, Any]
    properties: dict[str, Any] | None = None


class DuplicateCandidate(BaseModel):
    """A node the refused write probably is, and why the scorer thought so."""

    model_config = _READ

    label: str
    merge_keys: dict[str, Any]
    score: float
    verdict: str
    reasons: list[str]
    evidence: list[dict[str, Any]] | None = None  # declared evidence fields' contributions


class _Refusal(BaseModel):
    model_config = _READ

    candidates: list[DuplicateCandidate] = []


class DuplicateEntry(BaseModel):
    model_config = _OUT

    outcome: Literal["resolved", "proposed", "merged", "unmerged"]
    at: str
    seq: int | None  # the write's or merge's event (None: proposed, nothing appended)
    agent: str
    written_as: str | None  # the identity the writer named; the merged duplicate's
    landed_on: str | None  # the existing node it was written to; the merge's survivor
    message: str | None = None  # the refusal, naming the candidate; the merge's reason
    merge: str | None = None  # the merge's id (merged, unmerged)
    asked: DuplicateAsked | None = None  # proposed: the write refused
    candidates: list[DuplicateCandidate] = []  # proposed: best first, with their reasons


class DuplicateAudit(BaseModel):
    model_config = _OUT

    resolved: int
    proposed: int
    merged: int
    unmerged: int
    entries: list[DuplicateEntry]


def audit_duplicates(
    log: Log, *, since: datetime | None = None, until: datetime | None = None
) -> DuplicateAudit:
    """Every resolution, duplicate proposal, merge and unmerge between ``since`` and
    ``until``, in time order."""
    found = list(_appended(log, since, until))
    proposed = [
        DuplicateEntry(
            outcome="proposed",
            at=r.at,
            seq=None,
            agent=r.agent,
            written_as=None,
            landed_on=None,
            message=r.message,
            asked=_read(DuplicateAsked, r.request),
            candidates=(_read(_Refusal, r.details) or _Refusal()).candidates,
        )
        for r in RejectionLog(log).read(since=since, until=until)
        if r.error_code == ErrorCode.POSSIBLE_DUPLICATE.value
    ]
    entries = sorted([*found, *proposed], key=lambda e: e.at)

    def count(outcome: str) -> int:
        return sum(1 for e in entries if e.outcome == outcome)

    return DuplicateAudit(
        resolved=count("resolved"),
        proposed=len(proposed),
        merged=count("merged"),
        unmerged=count("unmerged"),
        entries=entries,
    )


M = TypeVar("M", bound=BaseModel)


def _read(model: type[M], text: str | None) -> M | None:
    """A recorded refusal's JSON as ``model`` (None: unrecorded, cut short, or another
    shape: an older refusal shows its message alone)."""
    if text is None:
        return None
    try:
        return model.model_validate_json(text)
    except ValidationError:
        return None


_TYPES = (NodeWritten.event_type, NodesMerged.event_type, NodesUnmerged.event_type)


def _appended(log: Log, since: datetime | None, until: datetime | None) -> Iterator[DuplicateEntry]:
    for event in log.iter_events(types=_TYPES, since=since, until=until):
        at, agent = format_timestamp(event.occurred_at), event.actor.agent
        match payload_of(event):
            case NodeWritten(resolved_from=str(named), node=node):
                yield DuplicateEntry(
                    outcome="resolved",
                    at=at,
                    seq=event.seq,
                    agent=agent,
                    written_as=named,
                    landed_on=node.identity,
                )
            case NodesMerged() as merged:
                yield DuplicateEntry(
                    outcome="merged",
                    at=at,
                    seq=event.seq,
                    agent=agent,
                    written_as=merged.merged.identity,
                    landed_on=merged.survivor.identity,
                    message=merged.reason or None,
                    merge=merged.merge,
                )
            case NodesUnmerged() as unmerged:
                yield DuplicateEntry(
                    outcome="unmerged",
                    at=at,
                    seq=event.seq,
                    agent=agent,
                    written_as=unmerged.restored.identity,
                    landed_on=unmerged.survivor,
                    message=unmerged.reason or None,
                    merge=unmerged.merge,
                )
            case _:
                pass
