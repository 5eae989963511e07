"""Forgetting one subject through the gate: ``forget LABEL KEY=VALUE``.

The node a personal label's keys name is a subject of the log's sealing (``gate.personal``):
``Log.forget`` destroys its key and sealed values and appends the ``subject.forgotten``
receipt; in the same transaction the node's rows leave the read model and the text index
(``projections.state.forgetting``) and the refused requests that held its values leave the
rejections table (sealed with its subject, or — kept before refusals were sealed — naming its
keys in the clear). A dry run says what would go and appends nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Actor, InlineProjector, Log, Transaction, canonical_json
from writegate.eventlog.events import EventCore
from writegate.eventlog.sealing import ForgetPlan, SubjectsForgotten, destroy
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.personal import personal_of
from writegate.gate.refusal_seals import seals_of_subjects
from writegate.gate.rejections import forget_rejections
from writegate.gate.schema import LoadedSchema
from writegate.language import PSEUDONYM, NodesMerged, clear_identity, merge_stream, payload_of
from writegate.language.observations import document_of
from writegate.projections.state import StateProjection
from writegate.projections.state.forgetting import forget_nodes, forget_observations


class ForgetResult(BaseModel):
    """What a forgetting destroyed (or, dry, would): the receipt's event, the subject's
    pseudonym, the events that held its values and the counts per store."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"] = "ok"
    dry_run: bool
    node: str | None  # the pseudonym (None: the log holds no such subject)
    merged: list[str] = []  # the pseudonyms of the nodes merged with it: one person, gone too
    events: list[int]
    counts: dict[str, int]
    seq: int | None = None
    event_id: str | None = None


def forget(
    log: Log,
    state: StateProjection,
    schema: LoadedSchema,
    actor: Actor,
    label: str,
    keys: Mapping[str, Any],
    *,
    reason: str,
    dry_run: bool = False,
) -> ForgetResult:
    """Forget the node ``label`` and ``keys`` name; refuses a label that is not personal."""
    personal = personal_of(schema.registry)
    canonical = personal.canonical(label) if personal is not None else None
    if personal is None or canonical is None or canonical not in personal.labels:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"label {label!r} is not personal: only a personal label's nodes can be forgotten",
            {"field": "label"},
        )
    if not keys:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT, "keys must name the node", {"field": "keys"}
        )
    if not reason.strip():
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT, "a forgetting needs a reason", {"field": "reason"}
        )
    locator = clear_identity(canonical, keys)
    subject = log.subject_of(locator)
    node = f"{canonical}{PSEUDONYM}{subject}" if subject is not None else None
    person = _one_person(log, state, node, canonical, keys)
    others = sorted(identity for identity in person if identity != node)
    named_by = [keys, *person.values()]
    needles = list(dict.fromkeys(canonical_json(v).decode() for k in named_by for v in k.values()))
    observations = [o for identity in person for o in _cited(log, state, identity)]
    clear = [clear_identity(canonical, named) for named in person.values()] or [locator]
    locators = list(dict.fromkeys([*clear, *observations]))
    if dry_run:
        plan = log.forget_plan(locators)
        return ForgetResult(
            dry_run=True, node=node, merged=others, events=plan.events, counts=plan.counts()
        )

    def also(tx: Transaction, plan: ForgetPlan) -> dict[str, int]:
        destroy(tx.conn, plan.subjects)  # first, so the events applied again read null
        counts: dict[str, int] = {}
        inline: InlineProjector = state  # applies to the append's connection, whatever backend
        apply = partial(inline.apply_event, tx.conn)
        if person:
            counts = forget_nodes(tx.conn, list(person), replay, apply)
        if observations:
            counts.update(forget_observations(tx.conn, observations, replay, apply))
        counts["rejections"] = forget_rejections(
            tx.conn, [*needles, *seals_of_subjects(plan.subjects)]
        )
        return counts

    def replay(streams: Sequence[str]) -> Iterator[EventCore]:
        return log.iter_events(stream=list(streams))  # this thread's connection: the append's

    plan, receipt = log.forget(actor, locators, reason=reason, also=also)
    if receipt is None:
        return ForgetResult(dry_run=False, node=node, merged=others, events=plan.events, counts={})
    return ForgetResult(
        dry_run=False,
        node=node,
        merged=others,
        events=plan.events,
        counts=SubjectsForgotten.model_validate(receipt.payload).counts,
        seq=receipt.seq,
        event_id=receipt.event_id,
    )


def _one_person(
    log: Log, state: StateProjection, node: str | None, label: str, keys: Mapping[str, Any]
) -> dict[str, Mapping[str, Any]]:
    """The keys of each node that is one person with ``node`` (``label``, ``keys``): it, the
    survivor it was merged into and every duplicate merged into that survivor — forgotten
    together, as a merge moved their values onto each other's nodes (each sealed with its
    own subject, so each subject is named here)."""
    if node is None:
        return {}
    person: dict[str, Mapping[str, Any]] = {node: keys}
    with log.snapshot() as conn:
        alias = state.alias_of(conn, node)
        survivor = alias[0] if alias is not None else node
        merges = state.merges_into(conn, survivor)
        row = state.node(conn, survivor)
    if row is not None and row.label == label:
        person[survivor] = row.keys
    for merge in merges.values():
        found = log.latest(merge_stream(merge))
        record = payload_of(found) if found is not None else None
        if isinstance(record, NodesMerged) and record.merged.label == label:
            person[record.merged.identity] = record.merged.keys
    return person


def _cited(log: Log, state: StateProjection, node: str | None) -> list[str]:
    """The sealed observations the node's writes cite: forgotten with it, whole (a text
    cannot be cut into each person it tells of; each is a subject of its own), a cited
    passage's document with every passage."""
    if node is None:
        return []
    with log.snapshot() as conn:
        cited = dict.fromkeys(document_of(c.observation) for c in state.cited_by(conn, node))
    return [o for o in cited if log.subject_of(o) is not None]


__all__ = ["ForgetResult", "forget"]
