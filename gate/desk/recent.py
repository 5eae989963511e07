"""Who is writing now: the agents of the log's newest events, for the overview.

Read through ``audit_events`` (the same policy and scopes as any page of the log) as one
bounded page, the newest ``RECENT`` events, so the overview costs the same at any size;
kept while the head and the grant asking are the same, as the counts are.
"""

from __future__ import annotations

from dataclasses import dataclass

from writegate.gate.audit.auditor import AuditEvents
from writegate.gate.desk.asks import Asker, Refused
from writegate.gate.server.audit_tools import AuditEventsArgs
from writegate.gate.server.policy import Principal

RECENT = 200  # the newest events read for "writing now"


@dataclass(frozen=True)
class Writer:
    agent: str
    events: int  # of the newest RECENT
    last_seq: int
    last_at: str


_KEPT = 64  # answers kept, by who asked and the head they saw
_kept: dict[tuple[Principal, frozenset[str] | None, int], list[Writer]] = {}


async def writers_now(asker: Asker, principal: Principal, head: int) -> list[Writer] | None:
    """The agents of the newest events, the latest first (None: not the person's to read)."""
    if not asker.may(principal, "audit_events"):
        return None
    grant = asker.server.grant(principal)
    if grant.disabled:
        return None
    key = (principal, grant.reads, head)
    if (kept := _kept.get(key)) is not None:
        return kept
    args = AuditEventsArgs(cursor=str(max(head - RECENT, 0)), limit=RECENT)
    page = await asker.ask(principal, "audit_events", args, AuditEvents)
    if isinstance(page, Refused):
        return None
    found: dict[str, Writer] = {}
    for event in page.events:
        seen = found.get(event.agent)
        found[event.agent] = Writer(
            event.agent, (seen.events if seen else 0) + 1, event.seq, event.occurred_at
        )
    writers = sorted(found.values(), key=lambda w: -w.last_seq)
    if len(_kept) >= _KEPT:
        _kept.clear()
    _kept[key] = writers
    return writers
