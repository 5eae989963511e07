"""Feedback on an answer: which facts an agent used, and how the answer fared.

An agent that answered from the graph says so once per answer (``feedback.given``): the
outcome, the nodes and relationships it used, and the rate (``alpha``) at which each used
fact's weight moved toward the outcome's target. The rate travels in the event, so a
replay reproduces every weight whatever the setting is by then. The rule itself
(``moved``) is defined here once, for the read model that keeps the weights and for the
audit that shows them move.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from writegate.eventlog import canonical_json
from writegate.language.base import MODEL, Payload, unset

Outcome = Literal["accepted", "rework", "rejected"]
OUTCOMES: tuple[Outcome, ...] = ("accepted", "rework", "rejected")
# where each outcome pulls a used fact's weight
TARGETS: dict[Outcome, float] = {"accepted": 1.0, "rework": 0.5, "rejected": 0.0}
# a fact nobody rated weighs what "rework" pulls toward: midway, so the first accepted
# and the first rejected answer move it equally far, and it ranks between the two
INITIAL_WEIGHT = 0.5


def moved(weight: float, alpha: float, outcome: Outcome) -> float:
    """An exponential moving average's step: ``w + alpha * (target - w)``."""
    return weight + alpha * (TARGETS[outcome] - weight)


def feedback_stream(agent: str, session: str, answer: str | None) -> str:
    """The stream holding one agent's feedback on one answer: its version 0 is what makes
    the feedback land once, however often (and however concurrently) it is sent."""
    return "feedback:" + canonical_json([agent, session, answer]).decode()


class UsedRelationship(BaseModel):
    """A relationship an answer used: its identity, and its type (what a policy asks of)."""

    model_config = MODEL

    identity: str
    type: str


class FeedbackGiven(Payload):
    """An agent's feedback on one answer: each used fact's weight moved by ``alpha`` toward
    the outcome's target. Identities are as the read model held them when it was given (a
    merged duplicate's, the survivor's)."""

    event_type: ClassVar[str] = "feedback.given"

    session_id: str  # the agent's label for the session (or answer), as given
    answer_id: str | None = Field(default=None, exclude_if=unset)
    outcome: Outcome
    alpha: float  # the setting when it was given: replays never read today's
    nodes: list[str]
    relationships: list[UsedRelationship]

    @property
    def subject(self) -> str:
        return self.session_id
