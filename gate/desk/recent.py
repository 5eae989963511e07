"""Who is writing now: the agents of the log's newest events, for the overview.

Read through ``audit_events`` (the same policy and scopes as any page of the log) as one
bounded page, the newest ``RECENT`` events, so the overview costs the same at any size.
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


async def writers_now(asker: Asker, principal: Principal, head: int) -> list[Writer] | None:
    """The agents of the newest events, the latest first (None: not the person's to read)."""
    if not asker.may(principal, "audit_events"):
        return None
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
    return sorted(found.values(), key=lambda w: -w.last_seq)
