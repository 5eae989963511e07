"""``[serve.oauth]``: the settings of writegate as an OAuth resource server (see
``gate.server.oauth``), kept apart so reading a config file imports no JWT library."""

from __future__ import annotations

from pathlib import Path

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, field_validator, model_validator

ROLES = ("writer", "reader", "auditor", "reviewer", "admin")  # policy.ROLES, without Cedar
ROLES_BY_SCOPE = {f"writegate:{role}": role for role in ROLES}
ASYMMETRIC = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")
SYMMETRIC = ("HS256", "HS384", "HS512")


class OAuthSettings(BaseModel):
    """``[serve.oauth]``: where tokens come from and what they must say."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    issuer: str  # the authorization server, exactly as its tokens' ``iss`` spells it
    jwks_uri: AnyHttpUrl | None = None  # its signing keys (the usual way)
    public_key: Path | None = None  # or one PEM public key
    secret_file: Path | None = None  # or (HS256/384/512 only) a key shared with it
    audience: str | list[str] | None = None  # ``aud`` required (default: the resource URL)
    resource: AnyHttpUrl | None = None  # this server's public URL of /mcp (default: its bind)
    algorithms: list[str] | None = None  # default: RS256, ES256 (HS256 with secret_file)
    leeway: int = Field(default=30, ge=0, le=300)  # seconds of clock skew for iat/nbf
    scopes: dict[str, str] = Field(default_factory=lambda: dict(ROLES_BY_SCOPE))  # -> role
    agent_prefix: str = "oauth:"  # the agent an event names: prefix + the token's ``sub``

    @field_validator("issuer")
    @classmethod
    def _an_url(cls, issuer: str) -> str:
        AnyHttpUrl(issuer)  # kept verbatim: RFC 8414/9068 compare ``iss`` as a string
        return issuer

    @field_validator("scopes")
    @classmethod
    def _known_roles(cls, scopes: dict[str, str]) -> dict[str, str]:
        unknown = sorted({r for r in scopes.values() if r not in ROLES})
        if unknown or not scopes:
            raise ValueError(f"scopes must map to some of {list(ROLES)}, not {unknown}")
        return scopes

    @field_validator("agent_prefix")
    @classmethod
    def _apart_from_tokens(cls, prefix: str) -> str:
        if ":" not in prefix:  # tokens-file agents never hold one, so they cannot be posed as
            raise ValueError("agent_prefix must contain ':' (e.g. 'oauth:')")
        return prefix

    @model_validator(mode="after")
    def _one_key_source(self) -> OAuthSettings:
        sources = [self.jwks_uri, self.public_key, self.secret_file]
        if sum(s is not None for s in sources) != 1:
            raise ValueError("give exactly one of jwks_uri, public_key and secret_file")
        allowed = SYMMETRIC if self.secret_file is not None else ASYMMETRIC
        if self.algorithms is not None:
            # never ``none``; never HS* with a public key (the key-confusion attack)
            wrong = [a for a in self.algorithms if a not in allowed]
            if wrong or not self.algorithms:
                raise ValueError(f"algorithms must be some of {', '.join(allowed)}, not {wrong}")
        return self

    def accepted_algorithms(self) -> list[str]:
        if self.algorithms is not None:
            return list(self.algorithms)
        return ["HS256"] if self.secret_file is not None else ["RS256", "ES256"]
