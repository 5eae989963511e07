"""Retention: personal values forgotten once the schema's period has passed (``retain``).

Only a sealed value can leave the log while its event still proves (``eventlog.sealing``),
so a retention is declared where values are sealed (``gate.schema.rules`` refuses it
elsewhere): on a personal property, whose superseded values expire that long after the
event that superseded them was recorded, and as ``observation_retention`` for personal
observations' text, counted from the observation's record time. A value that is current
again (set back, or equal to a merge key of its node) is never expired: its subject's key
stays, and so do the clear values it still has. The run is ``Log.expire``'s transaction: the
values' clear rows deleted, the read model and text index made again without them and the
refusals that held them dropped, as ``gate.forgetting`` does, and a ``values.expired``
receipt appended. A second run finds nothing new.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from writegate.eventlog import Actor, InlineProjector, Log, Transaction
from writegate.eventlog.events import EventCore, format_timestamp
from writegate.eventlog.expiring import (
    ExpirePlan,
    Ref,
    held,
    holding,
    sealed_events,
    subject_events,
)
from writegate.eventlog.sealing import ValuesExpired
from writegate.eventlog.sql import Sql
from writegate.gate.refusal_seals import seals_of_values
from writegate.gate.rejections import forget_rejections
from writegate.gate.schema import LoadedSchema
from writegate.gate.schema.document import SchemaDocument
from writegate.language import NodeWritten, ObservationRecorded
from writegate.projections.state import StateProjection
from writegate.projections.state.forgetting import forget_nodes, forget_observations

OBSERVATIONS = "observations"  # the policy's name for observations' text
WRITTEN = NodeWritten.event_type
RECORDED = ObservationRecorded.event_type


class RetainResult(BaseModel):
    """What a retention expired (or, dry, would): the values, the events that held them,
    the counts per store, the policy; the receipt's event when one was appended."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"] = "ok"
    dry_run: bool
    values: int
    events: list[int]
    counts: dict[str, int]
    policy: dict[str, str]
    seq: int | None = None
    event_id: str | None = None


class _Sealed(BaseModel):
    """A sealed value as stored: ``{"$sealed": "<subject>.<digest>"}``."""

    model_config = ConfigDict(extra="forbid")

    sealed: str = Field(alias="$sealed", pattern=r"^[0-9a-f]{32}\.[0-9a-f]{64}$")

    @classmethod
    def ref(cls, value: JsonValue) -> Ref | None:
        """The (subject, digest) of a stored value, None if it is not sealed."""
        try:
            subject, _, digest = cls.model_validate(value).sealed.partition(".")
        except ValidationError:
            return None
        return subject, digest


class _Old(BaseModel):
    model_config = ConfigDict(extra="ignore")

    property: str | None = None
    value: JsonValue = None


class _Node(BaseModel):
    model_config = ConfigDict(extra="ignore")

    identity: str
    label: str
    keys: dict[str, JsonValue] = {}


class _Written(BaseModel):
    """A stored ``node.written`` payload, its sealed values as markers."""

    model_config = ConfigDict(extra="ignore")

    node: _Node
    properties: dict[str, JsonValue] = {}
    superseded: list[_Old] | None = None


class _Recorded(BaseModel):
    model_config = ConfigDict(extra="ignore")

    observation: str
    text: JsonValue = None


def policy_of(schema: LoadedSchema) -> dict[str, timedelta]:
    """The declared periods: ``Label.property`` and ``observations``."""
    document = getattr(schema.registry, "document", None)
    if not isinstance(document, SchemaDocument):
        return {}
    periods = {
        f"{label}.{prop}": spec.retention
        for label, node in document.nodes.items()
        if node.personal
        for prop, spec in node.properties.items()
        if spec.personal and spec.retention is not None
    }
    if document.personal_observations and document.observation_retention is not None:
        periods[OBSERVATIONS] = document.observation_retention
    return periods


def _iso(period: timedelta) -> str:
    """An ISO 8601 duration of whole days and seconds (the receipt's spelling)."""
    seconds = period.seconds + period.microseconds / 1e6
    return f"P{period.days}D" + (f"T{seconds:g}S" if seconds else "")


class _Finder:
    """The values a policy expires at ``now``, read on the caller's connection; keeps the
    nodes and observations they belong to and their clear text for the cleanup after."""

    def __init__(self, periods: dict[str, timedelta], now: datetime) -> None:
        self.cutoffs = {name: format_timestamp(now - p) for name, p in periods.items()}
        self.nodes: list[str] = []
        self.observations: list[str] = []
        self.clear: list[str] = []

    def __call__(self, conn: Sql) -> ExpirePlan:
        found: dict[Ref, str] = {}  # value -> the node's identity, or the observation's id
        nodes: dict[Ref, str] = {}
        properties = {k: v for k, v in self.cutoffs.items() if k != OBSERVATIONS}
        if properties:
            for _, at, payload in sealed_events(conn, [WRITTEN], max(properties.values())):
                written = _Written.model_validate_json(payload)
                for old in written.superseded or ():
                    cutoff = properties.get(f"{written.node.label}.{old.property}")
                    ref = _Sealed.ref(old.value)
                    if cutoff is not None and at <= cutoff and ref is not None:
                        nodes[ref] = written.node.identity
        current = {ref for subject in {s for s, _ in nodes} for ref in _current(conn, subject)}
        found.update({ref: node for ref, node in nodes.items() if ref not in current})
        observations: dict[Ref, str] = {}
        if OBSERVATIONS in self.cutoffs:
            for _, _, payload in sealed_events(conn, [RECORDED], self.cutoffs[OBSERVATIONS]):
                recorded = _Recorded.model_validate_json(payload)
                ref = _Sealed.ref(recorded.text)
                if ref is not None:
                    observations[ref] = recorded.observation
        clear = held(conn, [*found, *observations])
        self.nodes = sorted({found[ref] for ref in clear if ref in found})
        self.observations = sorted({observations[ref] for ref in clear if ref in observations})
        self.clear = sorted(set(clear.values()))
        values = sorted(clear)
        return ExpirePlan(values, holding(conn, values))


def _current(conn: Sql, subject: str) -> set[Ref]:
    """The values of ``subject``'s node that still stand: its merge keys, and each
    property's value as its last write left it."""
    standing: set[Ref] = set()
    last: dict[str, Ref | None] = {}
    for _, kind, payload in subject_events(conn, subject):
        if kind != WRITTEN:
            continue
        written = _Written.model_validate_json(payload)
        standing.update(r for v in written.node.keys.values() if (r := _Sealed.ref(v)))
        last.update({name: _Sealed.ref(v) for name, v in written.properties.items()})
    return standing | {ref for ref in last.values() if ref is not None}


def retain(
    log: Log,
    state: StateProjection,
    schema: LoadedSchema,
    actor: Actor,
    *,
    dry_run: bool = False,
    now: datetime | None = None,
) -> RetainResult:
    """Expire what the schema's retention periods have passed (``now``: the clock)."""
    periods = policy_of(schema)
    policy = {name: _iso(period) for name, period in sorted(periods.items())}
    find = _Finder(periods, now or datetime.now(UTC))
    if not periods:
        return RetainResult(dry_run=dry_run, values=0, events=[], counts={}, policy=policy)
    if dry_run:
        with log.snapshot() as conn:
            plan = find(conn)
        return RetainResult(
            dry_run=True,
            values=len(plan.values),
            events=plan.events,
            counts=plan.counts() if plan.values else {},
            policy=policy,
        )

    def replay(streams: Sequence[str]) -> Iterator[EventCore]:
        return log.iter_events(stream=list(streams))  # this thread's connection: the append's

    def also(tx: Transaction, plan: ExpirePlan) -> dict[str, int]:
        inline: InlineProjector = state
        apply = partial(inline.apply_event, tx.conn)
        counts = forget_nodes(tx.conn, find.nodes, replay, apply) if find.nodes else {}
        if find.observations:
            counts.update(forget_observations(tx.conn, find.observations, replay, apply))
        counts["rejections"] = forget_rejections(
            tx.conn, [*find.clear, *seals_of_values(plan.values)]
        )
        return counts

    plan, receipt = log.expire(actor, find, policy=policy, also=also)
    if receipt is None:
        return RetainResult(dry_run=False, values=0, events=[], counts={}, policy=policy)
    return RetainResult(
        dry_run=False,
        values=len(plan.values),
        events=plan.events,
        counts=ValuesExpired.model_validate(receipt.payload).counts,
        policy=policy,
        seq=receipt.seq,
        event_id=receipt.event_id,
    )


__all__ = ["RetainResult", "policy_of", "retain"]
