"""OAuth 2.1 for ``serve --http``: writegate as a *resource server* (the MCP authorization
spec): an external authorization server issues JWT access tokens; writegate checks each
one's signature (the issuer's JWKS, or a configured public key), expiry, issuer and
audience, maps its scopes to roles, and names its subject as the agent in every event.
The SDK serves the RFC 9728 protected-resource metadata naming the issuer, and its 401s
carry ``WWW-Authenticate: Bearer resource_metadata="…"`` so a client can find where to
get a token. Tokens from the tokens file keep working beside JWTs.
"""

from __future__ import annotations

from typing import Any

import anyio
import jwt
from mcp.server.auth.provider import AccessToken

from writegate.gate.server.oauth_settings import OAuthSettings
from writegate.gate.server.tokens import ROLE_SCOPE, TokenStore


class OAuthVerifier:
    """The SDK's ``TokenVerifier``: a JWT checked against the settings, as an access token
    whose scopes name writegate roles; anything else (or a token in the tokens file) goes
    to ``tokens``."""

    def __init__(self, settings: OAuthSettings, resource: str, tokens: TokenStore) -> None:
        self.settings = settings
        self.audience = settings.audience or resource
        self.tokens = tokens
        self._jwks = jwt.PyJWKClient(str(settings.jwks_uri)) if settings.jwks_uri else None
        self._key = settings.public_key.read_text() if settings.public_key else None

    async def verify_token(self, token: str) -> AccessToken | None:
        known = await self.tokens.verify_token(token)
        if known is not None or token.count(".") != 2:
            return known
        try:
            claims = await anyio.to_thread.run_sync(self._claims, token)
        except (jwt.PyJWTError, ValueError):  # expired, forged, for someone else, unreadable
            return None
        roles = sorted(
            {self.settings.scopes[s] for s in _scopes(claims) if s in self.settings.scopes}
        )
        subject = str(claims.get("sub") or "")
        agent = self.settings.agent_prefix + subject
        if not subject or len(agent) > 200:
            return None
        return AccessToken(
            token=token,
            client_id=agent,
            scopes=[ROLE_SCOPE + role for role in roles],
            expires_at=int(claims["exp"]),
            subject=subject,
            claims={"iss": claims["iss"]},
        )

    def _claims(self, token: str) -> dict[str, Any]:
        key: Any = (
            self._jwks.get_signing_key_from_jwt(token).key if self._jwks is not None else self._key
        )
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=self.settings.algorithms,
            audience=self.audience,
            issuer=str(self.settings.issuer).rstrip("/"),
            options={"require": ["exp", "iss", "aud", "sub"]},
        )
        return claims


def _scopes(claims: dict[str, Any]) -> list[str]:
    """RFC 8693/9068 ``scope`` (space-separated), or the ``scp`` list some servers send."""
    scope = claims.get("scope", "")
    listed = claims.get("scp", [])
    return [
        *(scope.split() if isinstance(scope, str) else []),
        *(listed if isinstance(listed, list) else []),
    ]
