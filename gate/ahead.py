"""The nodes a write names, read before its checks ask for them one by one.

Planning (outside the write transaction) sees every node a write or a whole batch names;
each planner says so (``want``) while ``naming`` collects them, and ``read_ahead`` reads
them all in the transaction in one round trip (``projections.state.remembered``), so the
checks' own reads find them there. Nothing changes where reads cost no round trip (SQLite):
there ``read_ahead`` does nothing. Planning outside ``naming`` (a personal write planned
again inside the transaction) collects nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from writegate.eventlog import Transaction
from writegate.language import node_stream
from writegate.projections.state.remembered import read_ahead

_named: ContextVar[list[str] | None] = ContextVar("writegate_named", default=None)


@contextmanager
def naming() -> Iterator[list[str]]:
    """The identities the planning inside the block names, in order."""
    names: list[str] = []
    token = _named.set(names)
    try:
        yield names
    finally:
        _named.reset(token)


def want(identity: str) -> None:
    """The write being planned names this node."""
    names = _named.get()
    if names is not None:
        names.append(identity)


def ahead(tx: Transaction, names: Sequence[str]) -> None:
    """Read the named nodes' rows, and their streams' versions where the transaction reads
    them (``Transaction.versions_later``), in ``tx`` at once: one round trip on PostgreSQL."""
    if names:
        versions = tx.versions_later([node_stream(name) for name in names])
        read_ahead(tx.conn, names)
        versions()


__all__ = ["ahead", "naming", "want"]
