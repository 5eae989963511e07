"""``[serve.oauth]``: the settings of writegate as an OAuth resource server (see
``gate.server.oauth``), kept apart so reading a config file imports no JWT library."""

from __future__ import annotations

from pathlib import Path

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, model_validator

ROLES_BY_SCOPE = {
    f"writegate:{role}": role for role in ("writer", "reader", "auditor", "reviewer", "admin")
}
ASYMMETRIC = ("RS256", "RS384", "RS512", "ES256", "ES384", "PS256")


class OAuthSettings(BaseModel):
    """``[serve.oauth]``: where tokens come from and what they must say."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    issuer: AnyHttpUrl  # the authorization server; tokens must carry it as ``iss``
    jwks_uri: AnyHttpUrl | None = None  # its signing keys (the usual way)
    public_key: Path | None = None  # or one PEM public key
    audience: str | None = None  # ``aud`` required (default: the resource URL)
    resource: AnyHttpUrl | None = None  # this server's public URL of /mcp (default: its bind)
    algorithms: list[str] = Field(default_factory=lambda: ["RS256", "ES256"])
    scopes: dict[str, str] = Field(default_factory=lambda: dict(ROLES_BY_SCOPE))  # -> role
    agent_prefix: str = "oauth:"  # the agent an event names: prefix + the token's ``sub``

    @model_validator(mode="after")
    def _one_key_source(self) -> OAuthSettings:
        if (self.jwks_uri is None) == (self.public_key is None):
            raise ValueError("give exactly one of jwks_uri and public_key")
        weak = [a for a in self.algorithms if a not in ASYMMETRIC]
        if weak:
            raise ValueError(f"algorithms must be asymmetric ({', '.join(ASYMMETRIC)}), not {weak}")
        return self
