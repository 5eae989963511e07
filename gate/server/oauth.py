"""OAuth 2.1 for ``serve --http``: writegate as a *resource server* (the MCP authorization
spec): an external authorization server issues JWT access tokens; writegate checks each
one's signature (the issuer's JWKS, a configured public key, or — only when configured —
a shared HS* secret), expiry, issuer and audience, maps its scopes to roles, and names its
subject as the agent in every event. Its ``writegate:scope:<name>`` scopes grant those
scopes of the graph, ``writegate:scope:*`` every one; a token naming none grants the
implicit scope only (``gate.server.grants``). Tokens from the tokens file keep working beside JWTs.

What the SDK does, given ``AuthSettings(issuer_url=…, resource_server_url=…)`` and this
module's ``TokenVerifier``: the bearer middleware, the 401 for a missing or refused token
with ``WWW-Authenticate: Bearer …, resource_metadata="…"``, and the RFC 9728 metadata
route. What ``protect`` adds on the app the SDK built: the metadata with
``scopes_supported`` (the SDK would only list required scopes) at the RFC 9728 path and at
the root ``/.well-known/oauth-protected-resource``, and a 403 ``insufficient_scope`` (with
the scopes to ask for) for a valid token that grants no writegate role.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, cast

import anyio
import jwt
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from writegate.gate.server.grants import SCOPE_CLAIM
from writegate.gate.server.oauth_settings import OAuthSettings
from writegate.gate.server.tokens import ROLE_SCOPE, TokenStore

log = logging.getLogger("writegate.server")
WELL_KNOWN = "/.well-known/oauth-protected-resource"
MAX_AGENT = 200  # the event's ``actor.agent`` bound
REFETCH_EVERY = 10.0  # seconds: how often a token's unknown kid may fetch the key set again


class OAuthVerifier:
    """The SDK's ``TokenVerifier``: a JWT checked against the settings, as an access token
    whose scopes name writegate roles; anything else (or a token in the tokens file) goes
    to ``tokens``."""

    def __init__(self, settings: OAuthSettings, resource: str, tokens: TokenStore) -> None:
        self.settings = settings
        self.resource = resource
        self.audience = settings.audience or resource
        self.algorithms = settings.accepted_algorithms()
        self.tokens = tokens
        self._jwks = IssuerKeys(str(settings.jwks_uri)) if settings.jwks_uri else None
        self._key: str | bytes | None = None
        if settings.public_key is not None:
            self._key = settings.public_key.read_text()
        elif settings.secret_file is not None:
            self._key = settings.secret_file.read_bytes().strip()
            if len(self._key) < 32:
                raise ValueError(f"{settings.secret_file}: an HS* secret needs 32 bytes or more")

    async def verify_token(self, token: str) -> AccessToken | None:
        known = await self.tokens.verify_token(token)
        if known is not None or token.count(".") != 2:
            return known
        try:
            claims = await anyio.to_thread.run_sync(self._claims, token)
        except jwt.PyJWKClientConnectionError as exc:
            log.warning("OAuth: cannot fetch the issuer's keys: %s", exc)
            return None
        except (jwt.PyJWTError, ValueError) as exc:  # expired, forged, for someone else, …
            log.info("OAuth: token refused: %s", exc)
            return None
        subject = claims.get("sub")
        agent = self.settings.agent_prefix + str(subject)
        if not isinstance(subject, str) or not subject or len(agent) > MAX_AGENT:
            log.info("OAuth: token refused: its sub is not a string of at most %d", MAX_AGENT)
            return None
        granted = _scopes(claims)
        roles = sorted({self.settings.scopes[s] for s in granted if s in self.settings.scopes})
        return AccessToken(
            token=token,
            client_id=agent,
            scopes=[ROLE_SCOPE + role for role in roles]
            + [s for s in granted if s.startswith(SCOPE_CLAIM)],
            expires_at=int(claims["exp"]),
            resource=self.resource,
            subject=subject,
            claims={"iss": claims["iss"], "scope": " ".join(granted)},
        )

    def _claims(self, token: str) -> dict[str, Any]:
        key: Any = self._jwks.key_for(token) if self._jwks is not None else self._key
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=self.algorithms,
            audience=self.audience,
            issuer=self.settings.issuer,
            leeway=self.settings.leeway,
            options={"require": ["exp", "iss", "aud", "sub"]},
        )
        return claims


class IssuerKeys:
    """The issuer's signing keys, fetched from its JWKS and kept (PyJWT's cache: 5 minutes).
    A token whose ``kid`` they lack fetches them again before it is refused — the issuer
    rotated its key — at most once every ``REFETCH_EVERY`` seconds, so tokens naming made-up
    kids cannot hammer the issuer. (PyJWT's own cooldown counts from every fetch, the first
    included, so a key rotated soon after one was refused for up to 30 s.)"""

    def __init__(self, uri: str) -> None:
        self._client = jwt.PyJWKClient(uri, timeout=10, cooldown_duration=0)
        self._lock = threading.Lock()
        self._refetched: float | None = None

    def key_for(self, token: str) -> Any:
        # None (no kid) is passed on as PyJWT does: it matches a key published without one
        kid = cast(str, jwt.get_unverified_header(token).get("kid"))
        found = self._client.match_kid(self._client.get_signing_keys(), kid)
        if found is None and self._may_refetch():
            found = self._client.match_kid(self._client.get_signing_keys(refresh=True), kid)
        if found is None:
            raise jwt.PyJWKClientError(f"no signing key of the issuer's has kid {kid!r}")
        return found.key

    def _may_refetch(self) -> bool:
        with self._lock:
            now = time.monotonic()
            if self._refetched is not None and now - self._refetched < REFETCH_EVERY:
                return False
            self._refetched = now
            return True


def _scopes(claims: dict[str, Any]) -> list[str]:
    """RFC 9068 ``scope`` (space-separated), or the ``scp`` list some servers send."""
    scope = claims.get("scope", "")
    listed = claims.get("scp", [])
    return [
        *(scope.split() if isinstance(scope, str) else []),
        *(s for s in (listed if isinstance(listed, list) else []) if isinstance(s, str)),
    ]


def metadata_routes(auth: AuthSettings, scopes: list[str]) -> list[Route]:
    """RFC 9728 metadata (the SDK's route) naming the issuer and the scopes writegate maps,
    at the resource's own well-known path and, for clients that try it, the root one."""
    assert auth.resource_server_url is not None
    [route] = create_protected_resource_routes(
        resource_url=auth.resource_server_url,
        authorization_servers=[auth.issuer_url],
        scopes_supported=scopes,
        resource_name="writegate",
    )
    routes = [route]
    if route.path != WELL_KNOWN:
        routes.append(Route(WELL_KNOWN, endpoint=route.endpoint, methods=["GET", "OPTIONS"]))
    return routes


class ScopeGate:
    """A valid token that grants no writegate role: 403 ``insufficient_scope`` naming the
    scopes to ask for (the MCP spec's scope challenge), where the SDK would let it in to
    find no tools. Runs after the SDK's bearer middleware, on the MCP path only."""

    def __init__(self, app: ASGIApp, path: str, scopes: list[str], metadata_url: str) -> None:
        self.app = app
        self.path = path
        self.challenge = (
            f'Bearer error="insufficient_scope", scope="{" ".join(scopes)}", '
            f'resource_metadata="{metadata_url}", '
            'error_description="the token grants no writegate role"'
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if (
            scope["type"] == "http"
            and scope["path"].rstrip("/") == self.path.rstrip("/")
            and isinstance(user, AuthenticatedUser)
            and not any(s.startswith(ROLE_SCOPE) for s in user.access_token.scopes)
        ):
            refusal = JSONResponse(
                {"error": "insufficient_scope", "error_description": "no writegate role"},
                status_code=403,
                headers={"WWW-Authenticate": self.challenge},
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def auth_settings(settings: OAuthSettings, resource: str) -> AuthSettings:
    """What the SDK needs to be a resource server for ``settings.issuer``."""
    return AuthSettings(
        issuer_url=settings.issuer,  # a string, so a bare host stays as written
        resource_server_url=resource,
        validate_token_resource=False,  # the verifier checks ``aud`` itself (and sets resource)
    )


def protect(app: Starlette, auth: AuthSettings, scopes: list[str], path: str) -> None:
    """Add the metadata routes (ahead of the SDK's own, which lists no scopes) and the
    scope gate (after the SDK's bearer middleware) to the app the SDK built."""
    for position, route in enumerate(metadata_routes(auth, scopes)):
        app.router.routes.insert(position, route)
    assert auth.resource_server_url is not None
    metadata_url = str(build_resource_metadata_url(auth.resource_server_url))
    app.user_middleware.append(
        Middleware(ScopeGate, path=path, scopes=scopes, metadata_url=metadata_url)
    )
