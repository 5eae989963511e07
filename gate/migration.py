"""``migrate DEST``: a log written before its labels were declared personal, sealed.

The schema in force (the log's latest) says which labels and properties are personal. Each
event that holds none of the sealing format is re-encoded as a write made now would be: every
clear identity of a personal label's node (in its streams, payload and request, and inside
relationship and proposal identities) becomes its pseudonym, ``Label~<subject id>``, and its
keys, personal properties, superseded values and blocking keys are sealed with that node's
subject (``gate.personal``); events already sealed are carried as they are. The events are
written into a new log, chained anew, after which a ``log.migrated`` receipt binds the new
chain to the old head (``eventlog.migrating``). The old log is left as it was: once the
new one is in use, the operator deletes it (and its backups), or the values stay there.
The idempotency records come with the events, and the refused requests the rejections table
keeps are recorded again in the new log's (under new ids), sealed as refusals made now are.

Refused: a log that fails ``verify``; a node written both before and after its label was
declared personal (two streams, one clear and one a pseudonym, would become one: migrate
before writing to a newly personal label).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Actor, Event, EventLogError, Log, canonical_json, open_log
from writegate.eventlog.migrating import migrate_log
from writegate.eventlog.opening import is_postgres
from writegate.eventlog.sealing import MARK, Seals
from writegate.gate.backup import remove_partial
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.personal import Personal, personal_of
from writegate.gate.refusal_seals import Seal, sealing
from writegate.gate.rejection_records import Rejection
from writegate.gate.rejections import RejectionLog
from writegate.gate.schema import LoadedSchema
from writegate.language import PSEUDONYM, node_stream
from writegate.projections.state import StateProjection

_EVERY = 1 << 62  # as many streams as a log holds


class MigrateResult(BaseModel):
    """The new log's head, the old head its receipt names, and what was sealed."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"] = "ok"
    source: str
    dest: str
    head_seq: int
    head_hash: str
    from_head_seq: int
    from_head_hash: str
    resealed: int  # events whose body changed
    subjects: int  # personal nodes now named by a pseudonym
    idempotency: int = 0  # idempotency records carried
    rejections: int = 0  # refused requests carried


def migrate(
    log: Log, schema: LoadedSchema | None, dest: Log, actor: Actor, *, batch: int = 1000
) -> MigrateResult:
    """Write ``log`` into the empty ``dest`` with its personal values sealed, then the
    receipt; a log that fails ``verify`` or mixes a node's clear and sealed writes is
    refused (``INVALID_ARGUMENT``), and ``dest`` is left with nothing appended."""
    personal = personal_of(schema.registry) if schema is not None else None
    clear = _clear_identities(log, personal)
    mixed = [identity for identity in clear.values() if log.subject_of(identity) is not None]
    if mixed:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"{mixed[0]} was written both before and after its label was declared personal: "
            "migrate a log before writing to a newly personal label",
            {"field": "source"},
        )
    resealer = _Resealer(personal, clear)
    try:
        made = migrate_log(log, dest, actor, resealer.reseal, batch=batch)
    except EventLogError as exc:
        raise GateRejection(ErrorCode.INVALID_ARGUMENT, str(exc), {"field": "source"}) from exc
    refused = list(RejectionLog(log).read())
    if refused:
        RejectionLog(dest).keep(refused, lambda r: _refusal_seal(schema, r))
    return MigrateResult(
        source=log.describe(),
        dest=dest.describe(),
        head_seq=made.head_seq,
        head_hash=made.head_hash,
        from_head_seq=made.receipt.from_head_seq,
        from_head_hash=made.receipt.from_head_hash,
        resealed=made.receipt.resealed,
        subjects=len(resealer.named),
        idempotency=made.idempotency,
        rejections=len(refused),
    )


def _refusal_seal(schema: LoadedSchema | None, refusal: Rejection) -> Seal | None:
    """How a carried refusal is sealed under the schema in force, as a refusal made now
    would be (``gate.refusal_seals``); one cut short at the table's limit is no JSON left to
    seal, and kept as it was."""
    if schema is None:
        return None
    try:
        request = orjson.loads(refusal.request)
    except orjson.JSONDecodeError:
        return None
    return sealing(lambda: schema, request, refusal.operation)


def migrate_to(
    log: Log, schema: LoadedSchema | None, address: str | Path, actor: Actor, *, batch: int = 1000
) -> MigrateResult:
    """``migrate`` into the log at ``address``: a SQLite file that does not exist yet (left
    absent if the migration is refused or fails), or an empty PostgreSQL database."""
    made = not is_postgres(address)
    if made and Path(address).exists():
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"{address} exists: migrate into a new file",
            {"field": "dest"},
        )
    try:
        with open_log(address, inline=[StateProjection()]) as dest:
            return migrate(log, schema, dest, actor, batch=batch)
    except BaseException:
        if made:
            remove_partial(Path(address))
        raise


def _clear_identities(log: Log, personal: Personal | None) -> dict[str, str]:
    """Each personal label's node written in the clear: its identity as it appears inside a
    JSON string (escaped) -> the identity."""
    found: dict[str, str] = {}
    for label in sorted(personal.labels) if personal is not None else ():
        prefix = node_stream(label + "{")
        for stream in log.streams_starting(prefix, _EVERY):
            identity = stream.removeprefix(node_stream(""))
            found[canonical_json(identity).decode()[1:-1]] = identity
    return found


@dataclass
class _Resealer:
    personal: Personal | None
    clear: Mapping[str, str]  # escaped identity -> identity
    named: set[str] = field(default_factory=set)  # the identities replaced so far

    def __post_init__(self) -> None:
        labels = sorted({i.partition("{")[0] for i in self.clear.values()})
        self._starts = re.compile("|".join(re.escape(f"{label}{{") for label in labels) or "$^")
        self._longest = max(map(len, self.clear), default=0)

    def reseal(self, event: Event, seals: Seals) -> Event:
        """``event`` (as stored) as it would be written now; unchanged if already sealed."""
        texts = [canonical_json(part).decode() for part in (event.payload, event.request)]
        if self.personal is None or any(MARK in text for text in texts):
            return event
        streams, payload, request = (
            self._pseudonyms(canonical_json(part).decode(), seals)
            for part in (event.streams, event.payload, event.request)
        )
        return event.model_copy(
            update={
                "streams": orjson.loads(streams),
                "payload": self.personal.sealed(orjson.loads(payload), seals),
                "request": self.personal.sealed(orjson.loads(request), seals),
            }
        )

    def _pseudonyms(self, text: str, seals: Seals) -> str:
        """``text`` with each clear identity of a personal node replaced by its pseudonym."""
        out: list[str] = []
        at = 0
        for start in self._starts.finditer(text):
            if start.start() < at:
                continue
            escaped = self._identity_at(text, start.start())
            if escaped is None:
                continue
            identity = self.clear[escaped]
            label = identity.partition("{")[0]
            out += [text[at : start.start()], f"{label}{PSEUDONYM}{seals.subject(identity)[0]}"]
            self.named.add(identity)
            at = start.start() + len(escaped)
        return "".join([*out, text[at:]])

    def _identity_at(self, text: str, start: int) -> str | None:
        """The clear identity starting at ``start`` (each ``}`` after it may close one)."""
        end = text.find("}", start)
        while end != -1 and end - start < self._longest:
            if (candidate := text[start : end + 1]) in self.clear:
                return candidate
            end = text.find("}", end + 1)
        return None


__all__ = ["MigrateResult", "migrate", "migrate_to"]
