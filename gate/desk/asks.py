"""The desk asks the MCP tools, as the signed-in person: no read path of its own.

Every page is a face over a tool's answer, asked exactly as an agent's call is made
(``WritegateServer``'s catalog, the Cedar policy's ``may_use``, the caller's grant of
scopes, ``gate.server.calls``): what a person may see or do at the desk is what their token
may see or do over MCP, and a page shows the same models the tools return. A read-only desk
(``writegate desk``) asks read-only tools only, so no action can run there at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import anyio.to_thread
from pydantic import BaseModel

from writegate.gate.models import Rejected
from writegate.gate.reads.views import Stats
from writegate.gate.schema import SchemaSourceUnavailable
from writegate.gate.server.app import WritegateServer
from writegate.gate.server.calls import run
from writegate.gate.server.grants import Disabled
from writegate.gate.server.policy import Principal

R = TypeVar("R", bound=BaseModel)


class NotPermitted(Exception):
    """The tool is not one this person may use here (or does not exist): the desk answers
    as MCP does, without saying which."""


@dataclass(frozen=True)
class Refused:
    """A tool's refusal, or a read while the caller's scopes are all switched off."""

    message: str
    code: str


class Asker:
    """Tool calls for one server; ``read_only``: actions are never offered nor run."""

    def __init__(self, server: WritegateServer, *, read_only: bool = False) -> None:
        self.server = server
        self.read_only = read_only
        # the counts: kept while the head, the schema and the grant asking are the same (a
        # quiet log, a copy); the state keeps them for a whole grant, but a grant of some
        # scopes, or a copy of a layout before they were kept, counts by a scan
        self._counted: dict[tuple[frozenset[str] | None, tuple[int, str], str | None], Stats] = {}

    def may(self, principal: Principal, tool: str) -> bool:
        """Whether ``principal`` may call ``tool`` here (a page shows a control only then)."""
        spec = self.server.catalog().get(tool)
        if spec is None or (self.read_only and not spec.read_only):
            return False
        return self.server.policy.may_use(principal, tool)

    async def ask(
        self, principal: Principal, tool: str, args: BaseModel, answer: type[R]
    ) -> R | Refused:
        """``tool``'s answer to ``args`` for ``principal``; ``NotPermitted`` when it may not
        call it, ``Refused`` when the tool refused."""
        if not self.may(principal, tool):
            raise NotPermitted(tool)
        spec = self.server.catalog()[tool]
        grant = self.server.grant(principal)
        if spec.gated and grant.disabled:
            return Refused("every scope you may read is switched off", "DISABLED")
        raw = args.model_dump(mode="json", by_alias=True, exclude_none=True)
        call = self.server.calls.make(principal, spec, raw, grant)
        result = await anyio.to_thread.run_sync(run, spec, call)
        if isinstance(result, Rejected):
            return Refused(result.message, str(result.error_code))
        if isinstance(result, Disabled):
            return Refused("every scope you may read is switched off", "DISABLED")
        if not isinstance(result, answer):
            raise TypeError(f"{tool} answered {type(result).__name__}, not {answer.__name__}")
        return result

    async def stats(self, principal: Principal) -> Stats | None:
        """The head and the counts by label and type, as the ``writegate://stats`` resource
        reads them (for whoever may read the schema), or None. Counted again only once the
        log has moved."""
        if not self.may(principal, "get_schema"):
            return None
        spec = self.server.catalog()["get_schema"]
        grant = self.server.grant(principal)
        call = self.server.calls.make(principal, spec, {}, grant)
        gate = self.server.gate

        def counted() -> Stats:
            try:
                version: str | None = gate.current_schema().version
            except SchemaSourceUnavailable:
                version = None
            head = gate.log.head()
            key = (grant.reads, head, version)
            if (kept := self._counted.get(key)) is not None:
                return kept
            stats = call.reader.stats(head, version)
            if len(self._counted) >= 64:
                self._counted.clear()
            self._counted[key] = stats
            return stats

        return await anyio.to_thread.run_sync(counted)
