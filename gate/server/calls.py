"""One tool call as the server makes it: who may use which scopes, and the reader, the
guard and the grant the call gets (``gate.server.grants`` says where a grant comes from).

A caller who sees the whole graph shares the server's one reader; a caller granted some
scopes gets a reader of its own per call (``Gate.reader(scopes=)``: it keeps the last
answer's withheld counts) and a write guard that refuses events outside its grant
(``gate.server.write_scopes``). Before a write tool runs, the labels its arguments name
are checked against the grant, so nothing outside it is looked up on the caller's behalf.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from writegate.gate.api import Gate
from writegate.gate.errors import GateRejection
from writegate.gate.jobs import Jobs
from writegate.gate.models import Rejected
from writegate.gate.scopes import Scopes
from writegate.gate.server.audit_scopes import whole_log
from writegate.gate.server.grants import CallGrant, call_grant
from writegate.gate.server.policy import Policy, Principal
from writegate.gate.server.tools import ToolCall, ToolSpec
from writegate.gate.server.write_scopes import WriteScopes, outside_grant, scrubbed


class Calls:
    """Makes the calls of one server."""

    def __init__(
        self, gate: Gate, policy: Policy, jobs: Jobs | None, disabled: frozenset[str]
    ) -> None:
        self.gate = gate
        self.policy = policy
        self.jobs = jobs
        self.disabled = disabled  # ``[scopes] disabled``: off for every caller
        self.reader = gate.reader()  # for every caller who sees the whole graph

    def grant(self, principal: Principal, declared: frozenset[str]) -> CallGrant:
        """What ``principal`` may use now, the schema declaring ``declared``."""
        return call_grant(self.policy.grant(principal, declared), declared, self.disabled)

    def make(
        self, principal: Principal, spec: ToolSpec, raw: dict[str, Any], grant: CallGrant
    ) -> ToolCall:
        """The call of ``spec`` by ``principal`` with arguments ``raw``, inside ``grant``."""
        scoped = grant.reads is not None
        writes = WriteScopes(self.gate, grant.writes) if grant.writes is not None else None
        return ToolCall(
            gate=self.gate,
            reader=self.gate.reader(scopes=Scopes(granted=grant.reads)) if scoped else self.reader,
            actor=principal.actor(),
            guard=self.policy.write_guard(principal, spec.name, writes),
            raw=raw,
            roles=principal.roles,
            jobs=self.jobs,
            scopes=grant.reads,
            writes=grant.writes,
        )


def run(spec: ToolSpec, call: ToolCall) -> BaseModel:
    """The tool's outcome, a rejection as a result."""
    try:
        if spec.group == "write" and (outside := outside_grant(spec, call)) is not None:
            return outside  # before anything is looked up: what lies outside stays unseen
        if spec.group == "review":  # merges and held writes of any scope: every scope's work
            whole_log(call, spec.name)
        return scrubbed(spec.invoke(call), call.scopes)
    except GateRejection as exc:
        return Rejected(error_code=exc.code, message=exc.message, details=exc.details)
