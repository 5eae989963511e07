"""Signed-in desk sessions: the bearer token a person pasted, behind an opaque cookie.

The cookie names a session kept in this process only (a restart signs everyone out); it is
HttpOnly and SameSite=Strict, so no script reads it and no other site's page sends it. The
token itself stays here and is verified again on every request, so a token revoked in the
tokens file signs its sessions out at once. Each session has its own CSRF token, which every
form carries and every POST must return; a sign-in form is tied to its own short-lived
cookie the same way (double submit), so another site cannot sign a browser in as itself.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp.server.auth.provider import TokenVerifier

from writegate.gate.server.policy import Principal
from writegate.gate.server.tokens import principal_from_access

COOKIE = "wg_desk"
SIGNIN_COOKIE = "wg_desk_signin"
SESSION_TTL = 12 * 3600.0  # seconds a session lives from sign-in
MAX_SESSIONS = 10_000  # past that, the oldest are forgotten first

Verify = Callable[[str], Awaitable[Principal | None]]


@dataclass(frozen=True)
class DeskSession:
    """One browser's sign-in: whose token, and the CSRF token its forms carry."""

    token: str
    csrf: str
    started: float


@dataclass(frozen=True)
class SignedIn:
    """A request's signed-in person: who the token stands for now, and its session."""

    principal: Principal
    session: DeskSession


class Sessions:
    """The desk's sessions, keyed by the random value of their cookie."""

    def __init__(self, verify: Verify, ttl: float = SESSION_TTL) -> None:
        self._verify = verify
        self._ttl = ttl
        self._lock = threading.Lock()
        self._by_id: dict[str, DeskSession] = {}

    def start(self, token: str) -> tuple[str, DeskSession]:
        """A new session for ``token`` (already verified): its cookie value and itself."""
        session = DeskSession(token, secrets.token_urlsafe(32), time.monotonic())
        key = secrets.token_urlsafe(32)
        with self._lock:
            if len(self._by_id) >= MAX_SESSIONS:
                oldest = min(self._by_id, key=lambda k: self._by_id[k].started)
                del self._by_id[oldest]
            self._by_id[key] = session
        return key, session

    async def check(self, token: str) -> Principal | None:
        """Who ``token`` stands for, or None (the sign-in form's question)."""
        return await self._verify(token)

    def end(self, key: str | None) -> None:
        with self._lock:
            self._by_id.pop(key or "", None)

    async def who(self, key: str | None) -> SignedIn | None:
        """The person behind a cookie, or None: no such session, expired, or its token no
        longer valid (revoked, or its grant changed to nothing)."""
        if not key:
            return None
        with self._lock:
            session = self._by_id.get(key)
            if session is not None and time.monotonic() - session.started > self._ttl:
                del self._by_id[key]
                session = None
        if session is None:
            return None
        principal = await self._verify(session.token)
        if principal is None:
            self.end(key)
            return None
        return SignedIn(principal, session)


def bearer(verifier: TokenVerifier) -> Verify:
    """Sign-in with the tokens ``verifier`` accepts on ``/mcp``: the tokens file's, and an
    authorization server's JWTs where ``[serve.oauth]`` is configured."""

    async def verify(token: str) -> Principal | None:
        return principal_from_access(await verifier.verify_token(token))

    return verify


def same(given: str | None, expected: str | None) -> bool:
    """Whether a returned CSRF token is the expected one (in constant time)."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def fresh_token() -> str:
    """A random value for a sign-in form and its cookie."""
    return secrets.token_urlsafe(32)
