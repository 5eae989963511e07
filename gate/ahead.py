"""The nodes a write names, read before its checks ask for them one by one.

Planning (outside the write transaction) sees every node a write or a whole batch names;
each planner says so (``want``) while ``naming`` collects them, and ``read_ahead`` reads
them all in the transaction in one round trip (``projections.state.remembered``), so the
checks' own reads find them there — and, with them, the resolution index's candidates of
each name a write may create a node of (``want_probe``: the ranges are made there, only
where they are read) and the standing retractions of the sources and observations it
comes from (``want_retraction``). Nothing changes where reads cost no round trip (SQLite): there
``read_ahead`` does nothing. Planning outside ``naming`` (a personal write planned again
inside the transaction) collects nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from writegate.eventlog import Transaction
from writegate.language import node_stream
from writegate.projections.state.blocking import Probe
from writegate.projections.state.remembered import read_ahead

Probing = Callable[[], tuple[Probe, int] | None]
"""A name's index ranges and their limit, made when read (None: nothing to read)."""


@dataclass
class Named:
    """What the planning inside ``naming`` names: nodes, in order, index probes, and the
    sources and observations (``(kind, name)``) whose retraction its checks ask."""

    nodes: list[str] = field(default_factory=list)
    probes: list[Probing] = field(default_factory=list)
    retractions: list[tuple[str, str]] = field(default_factory=list)


_named: ContextVar[Named | None] = ContextVar("writegate_named", default=None)


@contextmanager
def naming() -> Iterator[Named]:
    """The identities (and probes) the planning inside the block names."""
    names = Named()
    token = _named.set(names)
    try:
        yield names
    finally:
        _named.reset(token)


def want(identity: str) -> None:
    """The write being planned names this node."""
    names = _named.get()
    if names is not None:
        names.nodes.append(identity)


def want_probe(probing: Probing) -> None:
    """The write being planned may create a node whose candidates ``probing`` reads."""
    names = _named.get()
    if names is not None:
        names.probes.append(probing)


def want_retraction(kind: str, names: list[str]) -> None:
    """The write being planned is checked against the retractions of these sources or
    observations (``kind``)."""
    named = _named.get()
    if named is not None:
        named.retractions.extend((kind, name) for name in names)


def ahead(tx: Transaction, names: Named) -> None:
    """Read the named nodes' rows, and their streams' versions where the transaction reads
    them, and the probes' index rows, in ``tx`` at once: one round trip on PostgreSQL,
    where a node's stream's version is read in the statement that reads its row (a
    statement of its own cost psycopg as much as the rest of a commit group's member)."""
    if not (names.nodes or names.probes or names.retractions):
        return
    streams = tx.unread_versions([node_stream(name) for name in names.nodes])
    versions = (node_stream(""), set(streams))
    found = read_ahead(tx.conn, names.nodes, names.probes, versions, names.retractions)
    if found is None:  # nothing is read ahead here (SQLite): the versions are read now
        tx.versions_later(streams)()
        return
    tx.read_versions(found)
    tx.versions_later([s for s in streams if s not in found])()  # rows known, not versions


__all__ = ["Named", "ahead", "naming", "want", "want_probe", "want_retraction"]
