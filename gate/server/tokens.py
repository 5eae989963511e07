"""Bearer tokens for the HTTP transport: a file of SHA-256 hashes, each naming an agent,
roles and the scopes it grants.

The file never holds a token, only its digest, so reading it does not let anyone
act as an agent. ``create_token`` prints the token once. The server re-reads the
file when it changes, so a new or revoked token takes effect without a restart.

A token's grant is ``scopes`` in its record: a list of scope names, or ``"*"`` for every
scope (an operator's, an auditor's). A record without it — a token made before grants
existed, or a new one made without ``--scope`` — grants the implicit scope only: it fails
closed (a scope declared later is never seen by accident), and a log that declares no
scopes has only that one, so such a token reads and writes exactly as before. The grant
rides to the server as ``writegate:scope:<name>`` scopes of the access token, the same
strings an OAuth token carries (``gate.server.grants``).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp.server.auth.provider import AccessToken

from writegate.gate.identifiers import is_agent_id
from writegate.gate.server.grants import IMPLICIT, claims_of, granted_by, valid_scope
from writegate.gate.server.policy import ROLES, Principal

TOKEN_PREFIX = "wg_"
ROLE_SCOPE = "role:"


class TokenFileError(ValueError):
    """The tokens file is unreadable or malformed; the message says why."""


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TokenRecord:
    sha256: str
    agent: str
    roles: tuple[str, ...]
    created_at: str
    note: str = ""
    scopes: frozenset[str] | None = IMPLICIT  # the grant (None: every scope)

    def stored(self) -> dict[str, Any]:
        grant: str | list[str] = "*" if self.scopes is None else sorted(self.scopes)
        return self.__dict__ | {"roles": list(self.roles), "scopes": grant}


def _grant(stored: Any) -> frozenset[str] | None:
    """A record's ``scopes`` (absent: the implicit scope only, see the module docstring)."""
    if stored is None:
        return IMPLICIT
    if stored == "*":
        return None
    if not isinstance(stored, list) or not all(isinstance(s, str) for s in stored):
        raise TypeError(f"scopes must be a list of names or '*', not {stored!r}")
    return frozenset(stored)


def _read(path: Path) -> list[TokenRecord]:
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [
            TokenRecord(
                r["sha256"],
                r["agent"],
                tuple(r["roles"]),
                r["created_at"],
                r.get("note", ""),
                _grant(r.get("scopes")),
            )
            for r in data["tokens"]
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TokenFileError(f"tokens file {path} is not valid: {exc}") from exc


def _write(path: Path, records: list[TokenRecord]) -> None:
    """Atomic replace, owner-only permissions."""
    data = {"tokens": [r.stored() for r in records]}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def create_token(
    path: str | Path,
    agent: str,
    roles: tuple[str, ...],
    note: str = "",
    scopes: frozenset[str] | None = IMPLICIT,
) -> str:
    """Add a new token for ``agent`` with ``roles``, granting ``scopes`` (None: every scope;
    by default the implicit one only), to the file and return it (shown once)."""
    if not is_agent_id(agent):
        raise TokenFileError(f"agent id {agent!r} must be 1-64 letters, digits, '_', '-' or '.'")
    unknown = [r for r in roles if r not in ROLES]
    if not roles or unknown:
        raise TokenFileError(f"roles must be some of {list(ROLES)}, not {list(roles)}")
    if scopes is not None and (not scopes or not all(valid_scope(s) for s in scopes)):
        raise TokenFileError(
            f"scopes must be scope names (letters, digits, _), not {sorted(scopes)}"
        )
    path = Path(path)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    record = TokenRecord(
        digest(token),
        agent,
        tuple(dict.fromkeys(roles)),
        datetime.now(UTC).isoformat(),
        note,
        scopes,
    )
    _write(path, [*_read(path), record])
    return token


def list_tokens(path: str | Path) -> list[TokenRecord]:
    """The tokens in the file, oldest first: their digests, agents, roles, never a token."""
    return _read(Path(path))


def revoke_agent(path: str | Path, agent: str) -> int:
    """Remove every token of ``agent``; returns how many were removed."""
    path = Path(path)
    records = _read(path)
    kept = [r for r in records if r.agent != agent]
    _write(path, kept)
    return len(records) - len(kept)


class TokenStore:
    """``mcp``'s ``TokenVerifier`` over the tokens file, re-read when its mtime changes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stamp: tuple[int, int] | None = None
        self._by_digest: dict[str, TokenRecord] = {}
        self._reload()

    def _reload(self) -> None:
        try:
            stat = self.path.stat()
            stamp: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp or not self._by_digest:
            self._by_digest = {r.sha256: r for r in _read(self.path)}
            self._stamp = stamp

    def agents(self) -> list[str]:
        """The agents that hold a token, each once."""
        self._reload()
        return sorted({r.agent for r in self._by_digest.values()})

    def principal(self, token: str) -> Principal | None:
        self._reload()
        record = self._by_digest.get(digest(token))
        if record is None:
            return None
        return Principal(
            agent=record.agent, roles=record.roles, transport="http", scopes=record.scopes
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        principal = self.principal(token)
        if principal is None:
            return None
        return AccessToken(
            token=token,
            client_id=principal.agent,
            scopes=[ROLE_SCOPE + role for role in principal.roles] + claims_of(principal.scopes),
        )


def principal_from_access(access: Any) -> Principal | None:
    """The principal an ``AccessToken`` (as set by the bearer middleware) stands for."""
    if not isinstance(access, AccessToken):
        return None
    roles = tuple(s.removeprefix(ROLE_SCOPE) for s in access.scopes if s.startswith(ROLE_SCOPE))
    return Principal(
        agent=access.client_id, roles=roles, transport="http", scopes=granted_by(access.scopes)
    )
