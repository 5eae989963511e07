"""A refusal as the rejections table keeps it (``Rejection``, read by audits and a subject's
export) and as it waits to be written there (``Refused``): ``gate.rejections`` keeps them."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Actor
from writegate.gate.refusal_seals import Seal


class Rejection(BaseModel):
    """One refused request as the table keeps it (read by audits and a subject's export)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: int
    at: str
    agent: str
    session: str | None
    transport: str
    operation: str
    error_code: str
    message: str
    request: str  # canonical JSON, cut at 64 KiB
    details: str | None = None  # canonical JSON of the refusal's details (None: unrecorded)


@dataclass(frozen=True)
class Refused:
    """One refusal as it will be stored; ``at`` is when it was refused, not recorded."""

    at: str
    actor: Actor
    operation: str
    error_code: str
    message: str
    request: str
    details: str | None
    seal: Seal | None = None  # how its personal values are sealed (``gate.refusal_seals``)

    @staticmethod
    def kept(r: Rejection) -> Refused:
        who = Actor(agent=r.agent, session=r.session, transport=r.transport)
        return Refused(r.at, who, r.operation, r.error_code, r.message, r.request, r.details)

    def said(self) -> str:
        return f"{self.operation} by {self.actor.agent} ({self.error_code}) at {self.at}"


__all__ = ["Refused", "Rejection"]
