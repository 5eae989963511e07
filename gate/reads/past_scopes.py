"""Scopes in the past: the scope each node had at a record time, read from its own events
(``NodeWritten.scope``; a stub's from the relationship write that created it), so a past
read (``as_of`` / ``valid_at``) keeps to a caller's grant as the graph then stood, as a
read of now keeps to it as the read model stands (``gate.reads.scoped``).

A write that records no scope leaves a node in the one it had (``projections.state.
scoping``): the last one recorded up to the time asked, else the implicit one.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from writegate.eventlog import Log
from writegate.gate.reads.timeline import relationship_at, touching_many
from writegate.language import (
    DEFAULT_SCOPE,
    NodeWritten,
    RelationshipWritten,
    node_stream,
    payload_of,
)


class PastScopes:
    """What a caller granted ``visible`` may see of the graph at record time ``as_of``."""

    def __init__(self, log: Log, as_of: datetime, visible: frozenset[str]) -> None:
        self._log, self.as_of, self.visible = log, as_of, visible
        self._scopes: dict[str, str] = {}

    def scope(self, identity: str) -> str:
        """The node's scope at ``as_of`` (the implicit one for a node with no events then)."""
        if identity not in self._scopes:
            scope = DEFAULT_SCOPE
            for event in self._log.iter_events(stream=node_stream(identity), until=self.as_of):
                match payload_of(event):
                    case NodeWritten(scope=str() as recorded):
                        scope = recorded
                    case RelationshipWritten(scopes=dict() as ends) if identity in ends:
                        scope = ends[identity]
                    case _:
                        pass
            self._scopes[identity] = scope
        return self._scopes[identity]

    def sees(self, identity: str) -> bool:
        return self.scope(identity) in self.visible

    def withheld(
        self,
        identities: Iterable[str],
        valid_at: datetime | None,
        relationship_type: str | None = None,
    ) -> dict[str, int]:
        """Per hidden scope, how many relationships present then (of one type, if given)
        lead from ``identities`` to a node in it: ``ScopedState.withheld`` in the past."""
        shown = list(dict.fromkeys(identities))
        counts: dict[str, int] = {}
        for identity, rids in touching_many(self._log, shown, self.as_of).items():
            for rid in rids:
                state, spell = relationship_at(self._log, rid, as_of=self.as_of, valid_at=valid_at)
                if state != "present" or spell is None:
                    continue
                if relationship_type is not None and spell.type != relationship_type:
                    continue
                ends = (spell.from_identity, spell.to_identity)
                for here, there in (ends, ends[::-1]):
                    if here == identity and not self.sees(there):
                        counts[self.scope(there)] = counts.get(self.scope(there), 0) + 1
        return dict(sorted(counts.items()))
