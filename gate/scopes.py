"""Scopes on the write path: which scope a write puts a node in, and whether the writer
may (``language.scopes`` says what a scope is; ``projections.state.scoping`` keeps it).

A label's scope is the schema's (``scope:``), or one of its ``scopes:`` the write names (a
node then keeps the one it is in until a write names another: it moves); a relationship's
ends keep the scopes their nodes have (a stub it creates takes its label's). An
observation is kept in the scope its writer names, one the schema knows. A writer granted
some scopes may write only inside them: a write that would put, move or touch a node (or
keep an observation) elsewhere is ``POLICY_DENIED`` before anything is appended
(``Scopes.refused``, asked of exactly the events).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from writegate.eventlog import Event
from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.schema import LoadedSchema
from writegate.language import (
    NodeCorroborated,
    NodeRef,
    NodeWritten,
    ObservationRecorded,
    RelationshipCorroborated,
    RelationshipWritten,
    payload_of,
)
from writegate.language.scopes import DEFAULT_SCOPE, Visible, scope_or_default
from writegate.projections.state.scoping import scope_of


def label_scope(snapshot: LoadedSchema, label: str) -> str | None:
    """The scope the schema puts a new node of ``label`` in when the write names none:
    its ``scope``, else the first of its ``scopes`` (None: the implicit one)."""
    entry = snapshot.registry.get_entry(label)
    if entry is None:
        return None
    return entry.scope or (entry.scopes[0] if entry.scopes else None)


def allowed_scopes(snapshot: LoadedSchema, label: str) -> list[str]:
    """The scopes a node of ``label`` may be written in."""
    entry = snapshot.registry.get_entry(label)
    if entry is not None and entry.scopes:
        return list(entry.scopes)
    return [scope_or_default(label_scope(snapshot, label))]


def known_scopes(snapshot: LoadedSchema | None) -> list[str]:
    """Every scope the schema names (the implicit one among them), sorted."""
    named = {DEFAULT_SCOPE}
    if snapshot is not None:
        for label in snapshot.registry.all_canonical_labels():
            named.update(allowed_scopes(snapshot, label))
    return sorted(named)


def node_scope(
    snapshot: LoadedSchema, label: str, asked: str | None, now: str | None
) -> tuple[str | None, str | None]:
    """The scope a node write records and the one it moves the node from (None: it does
    not move). The scope the write names (``INVALID_ARGUMENT`` naming the allowed ones
    unless the label allows it), else the one the node is in ``now`` while the label
    allows it, else the label's. The implicit scope is recorded as unset unless the node
    moves into it, so a log without scopes writes its events as before."""
    allowed = allowed_scopes(snapshot, label)
    if asked is not None and asked not in allowed:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"a {label} may be written in scope {', '.join(allowed)}, not {asked!r}",
            {"field": "scope", "allowed": allowed},
        )
    kept = now if now in allowed else None
    scope = asked or kept or scope_or_default(label_scope(snapshot, label))
    moved = now if now is not None and now != scope else None
    return (None if scope == DEFAULT_SCOPE and moved is None else scope), moved


def check_known_scope(snapshot: LoadedSchema | None, scope: str | None) -> None:
    """``INVALID_ARGUMENT`` naming the known scopes when ``scope`` is none of them (a scope
    nobody is granted would keep what is written there from every scoped reader)."""
    known = known_scopes(snapshot)
    if scope is not None and scope not in known:
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"scope {scope!r} is not one the schema names: {', '.join(known)}",
            {"field": "scope", "allowed": known},
        )


def end_scopes(conn: Sql, snapshot: LoadedSchema, ends: Sequence[NodeRef]) -> dict[str, str] | None:
    """Each end's scope by identity: the node's own, or its label's for one not there yet;
    None when every end is in the implicit scope (the event then reads as before)."""
    scopes = {
        ref.identity: scope_of(conn, ref.identity)
        or scope_or_default(label_scope(snapshot, ref.label))
        for ref in ends
    }
    return scopes if any(s != DEFAULT_SCOPE for s in scopes.values()) else None


class Scopes(BaseModel):
    """What one caller is granted: the scopes it may read and write (``granted`` None:
    every scope — the CLI, a credential made without grants)."""

    model_config = ConfigDict(frozen=True)

    granted: frozenset[str] | None = None

    @property
    def visible(self) -> Visible:
        return self.granted

    def refused(self, events: Iterable[Event]) -> list[str]:
        """The scopes outside the grant that these events would write into, each once."""
        if self.granted is None:
            return []
        outside: dict[str, None] = {}
        for scope in _written_scopes(events):
            if scope not in self.granted:
                outside.setdefault(scope)
        return list(outside)


ALL = Scopes()


def _written_scopes(events: Iterable[Event]) -> Iterable[str]:
    for event in events:
        match payload_of(event):
            case NodeWritten() as written:
                yield scope_or_default(written.scope)
                if written.moved_from is not None:
                    yield written.moved_from
            case RelationshipWritten() as written:
                ends = written.scopes or {}
                for ref in (written.from_node, written.to_node):
                    yield scope_or_default(ends.get(ref.identity))
            case ObservationRecorded() as observed:
                yield scope_or_default(observed.scope)
            case NodeCorroborated() as heard:  # a write, too: where the node is
                yield scope_or_default(heard.scope)
            case RelationshipCorroborated() as heard:
                ends = heard.scopes or {}
                for identity in (heard.from_identity, heard.to_identity):
                    yield scope_or_default(ends.get(identity))
            case _:
                pass
