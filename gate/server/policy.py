"""Who may see and call which tool, and write which label: Cedar policies evaluated by cedarpy.

Principals are ``Agent::"<id>"`` entities whose parents are their ``Role::"<role>"``s.
Every tool is an action ``Action::"<tool>"`` in one group (``write``, ``read``,
``schema``, ``audit``); the default roles in ``policies.cedar`` (beside this module) grant
groups. Two questions are asked:

* may this agent use the tool? — resource ``Tool::"<tool>"``; used both to filter
  ``tools/list`` and to gate ``tools/call``, so listing and calling cannot disagree;
* may this agent's write touch this label or type? — resource ``Label::"<label>"`` or
  ``RelationshipType::"<TYPE>"``, asked of exactly the events the write would append;
* may this agent use this scope? — action ``Action::"use_scope"``, resource
  ``Scope::"<name>"``: the grant its credential carries (``Principal.scopes``) is narrowed
  to the scopes the policy permits. Every policy set permits every scope (``SCOPE_PERMIT``
  is always added, whatever ``--policy`` files replace the default roles), so an operator
  takes one away with a ``forbid`` (which wins over any permit), never has to grant one.
  A grant of every scope (``None``) is asked about the current schema's declared scopes
  and the implicit one; it stays ``None`` unless the policy forbids one of them, and then
  becomes the permitted ones — asked again per call, so a scope published later is
  checked as soon as it is declared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cedarpy

from writegate.eventlog import Actor, Event
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.language import (
    DEFAULT_SCOPE,
    FeedbackGiven,
    NodeCorroborated,
    NodeDeleted,
    NodeWritten,
    RelationshipCorroborated,
    RelationshipDeleted,
    RelationshipWritten,
    parse_node_identity,
    payload_of,
)

# shipped inside the package, so an installed writegate serves without --policy
_MAX_REMEMBERED = 100_000  # (agent, roles, tool, label) answers kept; past that, start over
DEFAULT_POLICY_FILE = Path(__file__).resolve().parent / "policies.cedar"
ROLES = ("writer", "reader", "auditor", "reviewer", "admin")
GROUPS = ("write", "read", "schema", "audit", "review", "jobs", "forget")
SCOPE_ACTION = "use_scope"
# always part of the policy set: every scope is permitted until a policy forbids it
SCOPE_PERMIT = f'permit (principal, action == Action::"{SCOPE_ACTION}", resource);'


class PolicyError(ValueError):
    """The policy text does not parse; the message says where."""


@dataclass(frozen=True)
class Principal:
    """An authenticated agent, the roles its credential carries and the scopes it grants
    (``scopes`` None: every scope — the operator's own stdio process; a token or an OAuth
    token always says, and grants only the implicit scope when it names none)."""

    agent: str
    roles: tuple[str, ...] = ("writer",)
    session: str | None = None
    transport: str | None = None
    scopes: frozenset[str] | None = None

    def actor(self, session: str | None = None) -> Actor:
        return Actor(agent=self.agent, session=session or self.session, transport=self.transport)


def _uid(kind: str, name: str) -> dict[str, str]:
    return {"type": kind, "id": name}


@dataclass
class Policy:
    """A parsed Cedar policy set plus the action hierarchy of the current tool catalog."""

    text: str
    _policies: Any = field(init=False, repr=False)
    _actions: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    # tool visibility is asked on every list and call; the answer only changes with the catalog
    _seen: dict[tuple[str, tuple[str, ...], str], bool] = field(
        default_factory=dict, init=False, repr=False
    )
    _written: dict[tuple[str, tuple[str, ...], str, str, str], bool] = field(
        default_factory=dict, init=False, repr=False
    )
    _scoped: dict[tuple[str, tuple[str, ...], str], bool] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        try:
            self._policies = cedarpy.PolicySet.from_str(f"{self.text}\n{SCOPE_PERMIT}\n")
        except Exception as exc:  # cedarpy raises its own ValueError subclasses
            raise PolicyError(f"policy does not parse: {exc}") from exc

    @classmethod
    def load(cls, paths: Sequence[str | Path] = ()) -> Policy:
        """The named files joined in order, or the default roles when none is named."""
        files = [Path(p) for p in paths] or [DEFAULT_POLICY_FILE]
        texts = []
        for path in files:
            try:
                texts.append(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise PolicyError(f"cannot read policy {path}: {exc.strerror or exc}") from exc
        return cls("\n".join(texts))

    def declare_tools(self, groups: dict[str, str]) -> None:
        """Which group each tool belongs to (the catalog changes with the schema)."""
        self._actions = dict(groups)
        self._seen = {}
        self._written = {}

    def _entities(self, principal: Principal, action: str) -> list[dict[str, Any]]:
        group = self._actions.get(action)
        return [
            {
                "uid": _uid("Agent", principal.agent),
                "attrs": {},
                "parents": [_uid("Role", role) for role in principal.roles],
            },
            *({"uid": _uid("Role", role), "attrs": {}, "parents": []} for role in principal.roles),
            {
                "uid": _uid("Action", action),
                "attrs": {},
                "parents": [_uid("Action", group)] if group else [],
            },
            *({"uid": _uid("Action", g), "attrs": {}, "parents": []} for g in GROUPS),
        ]

    def _allowed(
        self, principal: Principal, action: str, resources: Iterable[dict[str, str]]
    ) -> list[bool]:
        requests = [
            {
                "principal": _uid("Agent", principal.agent),
                "action": _uid("Action", action),
                "resource": resource,
                "context": {},
            }
            for resource in resources
        ]
        if not requests:
            return []
        results = cedarpy.is_authorized_batch(
            requests, self._policies, self._entities(principal, action)
        )
        return [r.allowed for r in results]

    def may_use(self, principal: Principal, tool: str) -> bool:
        if tool not in self._actions:
            return False
        key = (principal.agent, principal.roles, tool)
        if (known := self._seen.get(key)) is None:
            known = self._seen[key] = self._allowed(principal, tool, [_uid("Tool", tool)])[0]
        return known

    def may_write(
        self, principal: Principal, tool: str, touched: Sequence[tuple[str, str]]
    ) -> list[bool]:
        """Whether ``tool`` may touch each (kind, name). The policy sees nothing else (no
        attributes, no context), so each answer is remembered until the catalog changes:
        the guard runs inside the write lock, and Cedar costs ~150 µs a call."""
        keys = [(principal.agent, principal.roles, tool, kind, name) for kind, name in touched]
        unknown = [key for key in keys if key not in self._written]
        if unknown:
            if len(self._written) > _MAX_REMEMBERED:
                self._written.clear()
            verdicts = self._allowed(principal, tool, [_uid(k[3], k[4]) for k in unknown])
            self._written.update(zip(unknown, verdicts, strict=True))
        return [self._written[key] for key in keys]

    def grant(self, principal: Principal, declared: Iterable[str]) -> frozenset[str] | None:
        """The scopes ``principal`` may use: its credential's grant less what the policy
        forbids (``declared``: the scopes the current schema names, asked about for a grant
        of every scope). See the module docstring."""
        granted = principal.scopes
        names = sorted(granted if granted is not None else {*declared, DEFAULT_SCOPE})
        keys = [(principal.agent, principal.roles, name) for name in names]
        unknown = [key for key in keys if key not in self._scoped]
        if unknown:
            if len(self._scoped) > _MAX_REMEMBERED:
                self._scoped.clear()
            verdicts = self._allowed(
                principal, SCOPE_ACTION, [_uid("Scope", k[2]) for k in unknown]
            )
            self._scoped.update(zip(unknown, verdicts, strict=True))
        permitted = frozenset(k[2] for k in keys if self._scoped[k])
        if granted is None and len(permitted) == len(names):
            return None
        return permitted

    def write_guard(
        self,
        principal: Principal,
        tool: str,
        outside: Callable[[Sequence[Event]], list[str]] | None = None,
    ) -> Any:
        """A ``WriteGuard`` for one call: every label and type the events touch must be
        allowed, and (for a caller granted some scopes) ``outside`` must name no scope the
        events touch outside the grant (``gate.server.write_scopes``)."""

        def guard(actor: Actor, events: Sequence[Event]) -> None:
            touched = sorted(set(_touched(events)))
            verdicts = self.may_write(principal, tool, touched)
            denied = [
                f"{kind}::{name}"
                for (kind, name), ok in zip(touched, verdicts, strict=True)
                if not ok
            ]
            if denied:
                raise GateRejection(
                    ErrorCode.POLICY_DENIED,
                    f"agent {actor.agent!r} may not write {', '.join(denied)} with {tool}",
                    {"agent": actor.agent, "tool": tool, "denied": denied},
                )
            if outside is not None and (scopes := outside(events)):
                raise GateRejection(
                    ErrorCode.POLICY_DENIED,
                    f"agent {actor.agent!r} may not write in scope {', '.join(sorted(scopes))} "
                    f"with {tool}",
                    {"agent": actor.agent, "tool": tool, "scopes": sorted(scopes)},
                )

        return guard


def _touched(events: Sequence[Event]) -> Iterable[tuple[str, str]]:
    """The labels and relationship types an append would create, change, delete or
    re-weight (feedback moves a fact's weight: a write to it, as the policy sees it)."""
    for event in events:
        match payload_of(event):
            case NodeWritten(node=node) | NodeDeleted(node=node) | NodeCorroborated(node=node):
                yield "Label", node.label
            case RelationshipCorroborated() as heard:  # a corroboration is a write
                yield "RelationshipType", heard.type
            case RelationshipWritten() as written:
                yield "RelationshipType", written.type
                for stub in written.stubs_created:
                    yield "Label", stub.label
            case RelationshipDeleted() as deleted:
                yield "RelationshipType", deleted.type
            case FeedbackGiven() as feedback:
                for identity in feedback.nodes:
                    yield "Label", parse_node_identity(identity)[0]
                for used in feedback.relationships:
                    yield "RelationshipType", used.type
            case _:
                pass
