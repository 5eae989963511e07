"""The graph ``graph_query`` walks: as it stands (the read model) or as it stood (the log).

Both answer the same four questions, so the query's pipeline does not know which it asks:
which of some nodes exist, each node's relationships (bounded per node), what a node says
in words, and the event that last wrote each of some relationships. ``Present`` reads the state read
model, each question an index probe; ``Past`` rebuilds the graph at a record time
(``as_of``) or a valid time (``valid_at``) from the log, as ``gate.reads.past`` does for
``open_nodes``: a past relationship's nodes are found by reading the log's relationship
writes since the node first appeared, which makes a past query an auditor's question.
Given a caller's grant (``PastScopes``), the past graph holds only the nodes then in it,
and the relationships between them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from writegate.eventlog import Event, Log
from writegate.eventlog.events import format_timestamp
from writegate.eventlog.sql import Sql
from writegate.gate.reads.expansion import Link
from writegate.gate.reads.past import node_view_then
from writegate.gate.reads.past_scopes import PastScopes
from writegate.gate.reads.timeline import relationship_at, touching_many
from writegate.projections.state import StateProjection

Words = tuple[str, dict[str, Any]]  # a node's label and properties: what it says


class QueryGraph(Protocol):
    def existing(self, identities: Iterable[str]) -> list[str]:
        """The nodes among ``identities`` that exist (at the time asked), in their order."""
        ...

    def links(
        self, identities: list[str], relationship_type: str | None, cap: int
    ) -> tuple[dict[str, list[Link]], bool]:
        """Each node's relationships (of one type, if given), at most ``cap`` a node, and
        whether any node had more."""
        ...

    def words(self, identities: Iterable[str]) -> dict[str, Words]:
        """What each existing node among ``identities`` says: label and properties."""
        ...

    def last_written(self, links: Iterable[Link]) -> dict[str, Event]:
        """The event that last wrote each of ``links`` (which ``links`` gave), by identity."""
        ...


class Present:
    """The graph now: the state read model on one snapshot's connection."""

    def __init__(self, log: Log, conn: Sql, state: StateProjection) -> None:
        self._log, self._conn, self._state = log, conn, state
        self._words: dict[str, Words] = {}

    def existing(self, identities: Iterable[str]) -> list[str]:
        return list(self.words(identities))

    def links(
        self, identities: list[str], relationship_type: str | None, cap: int
    ) -> tuple[dict[str, list[Link]], bool]:
        step, more = self._state.links_touching(self._conn, identities, relationship_type, cap)
        found = {
            identity: [Link(a.identity, a.type, a.from_identity, a.to_identity) for a in rows]
            for identity, rows in step.items()
        }
        return found, more

    def words(self, identities: Iterable[str]) -> dict[str, Words]:
        wanted = list(dict.fromkeys(identities))
        missing = [i for i in wanted if i not in self._words]
        for row in self._state.nodes(self._conn, missing):
            self._words[row.identity] = (row.label, row.properties)
        return {i: self._words[i] for i in wanted if i in self._words}

    def last_written(self, links: Iterable[Link]) -> dict[str, Event]:
        seqs = self._state.last_writes(self._conn, (link.identity for link in links))
        events = self._log.read_seqs(seqs.values())
        return {identity: events[seq] for identity, seq in seqs.items()}


class Past:
    """The graph at record time ``as_of`` or, given ``valid_at``, as true then (as known at
    ``as_of``), rebuilt from the log."""

    def __init__(
        self,
        log: Log,
        as_of: datetime,
        valid_at: datetime | None,
        scopes: PastScopes | None = None,
    ) -> None:
        self._log, self._as_of, self._valid_at = log, as_of, valid_at
        self._scopes = scopes  # a caller's grant: nodes outside it then are not there
        self._words: dict[str, Words | None] = {}
        self._last: dict[str, Event] = {}  # each relationship's last write, as ``links`` saw

    def _node(self, identity: str) -> Words | None:
        if identity not in self._words:
            if self._scopes is not None and not self._scopes.sees(identity):
                self._words[identity] = None
                return None
            view = node_view_then(self._log, identity, self._as_of, self._valid_at)
            self._words[identity] = (view.label, view.properties) if view else None
        return self._words[identity]

    def existing(self, identities: Iterable[str]) -> list[str]:
        return [i for i in dict.fromkeys(identities) if self._node(i) is not None]

    def links(
        self, identities: list[str], relationship_type: str | None, cap: int
    ) -> tuple[dict[str, list[Link]], bool]:
        found: dict[str, list[Link]] = {i: [] for i in identities}
        more = False
        for identity, rids in touching_many(self._log, identities, self._as_of).items():
            for rid in rids:
                state, spell = relationship_at(
                    self._log, rid, as_of=self._as_of, valid_at=self._valid_at
                )
                if state != "present" or spell is None:
                    continue
                if relationship_type is not None and spell.type != relationship_type:
                    continue
                if self._scopes is not None and not all(
                    map(self._scopes.sees, (spell.from_identity, spell.to_identity))
                ):
                    continue
                if len(found[identity]) == cap:
                    more = True
                    break
                self._last[rid] = spell.last
                found[identity].append(
                    Link(
                        rid,
                        spell.type,
                        spell.from_identity,
                        spell.to_identity,
                        format_timestamp(spell.valid_from),
                        format_timestamp(spell.valid_to) if spell.valid_to else None,
                    )
                )
        return found, more

    def words(self, identities: Iterable[str]) -> dict[str, Words]:
        return {i: w for i in dict.fromkeys(identities) if (w := self._node(i)) is not None}

    def last_written(self, links: Iterable[Link]) -> dict[str, Event]:
        return {link.identity: self._last[link.identity] for link in links}
