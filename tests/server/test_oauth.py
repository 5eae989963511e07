"""OAuth for ``serve --http`` (issue 14, acceptance 8): an authorization server's JWT with
the writer scope writes, and the event names its subject; an expired token, one for
another audience, from another issuer or with a forged signature is a 401 that points to
the protected-resource metadata, which is served and names the issuer. A valid token that
grants no writegate role is a 403 ``insufficient_scope`` (the MCP spec's scope challenge),
naming the scopes to ask for.

The authorization server here is a real HTTP server started by the test, serving the
JWKS of a key pair the test made; writegate fetches it as it would a real issuer's, and
the SDK's client speaks to a real ``writegate serve --http``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from tests.readme import blocks, section
from tests.server.conftest import published
from tests.server.harness import HttpServer, free_port, http_agent, http_server
from writegate.cli.config import load_settings
from writegate.eventlog import EventLog
from writegate.gate.server import policy
from writegate.gate.server.oauth import OAuthVerifier
from writegate.gate.server.oauth_settings import ROLES, OAuthSettings
from writegate.gate.server.tokens import TokenStore, create_token

pytestmark = pytest.mark.anyio
ACCEPT = "application/json, text/event-stream"
SUBJECT = "auth0|ada@example.org"  # real issuers' subjects hold '|' and '@'
WRITE = {
    "label": "Person", "merge_keys": {"name": "Ada"}, "source": "sso",
    "extraction_method": "api",
}  # fmt: skip


class Issuer:
    """A key pair and the JWKS an authorization server would publish for it."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.jwks = _jwks(self.key, "k1")
        self.fetches = 0  # how often the JWKS was fetched

    def rotate(self) -> Any:
        """A new signing key, ``k2``, published in place of ``k1`` (as an issuer rotates)."""
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.jwks = _jwks(self.key, "k2")
        return self.key

    def token(self, key: Any = None, kid: str = "k1", **overrides: Any) -> str:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "sub": SUBJECT,
            "aud": "writegate-test",
            "iat": now,
            "exp": now + 300,
            "scope": "openid writegate:writer",
            **overrides,
        }
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": kid})

    def public_pem(self) -> str:
        return (
            self.key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )


def _jwks(key: Any, kid: str) -> str:
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return json.dumps({"keys": [{**jwk, "kid": kid, "use": "sig", "alg": "RS256"}]})


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    made = Issuer()

    class JWKS(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            made.fetches += 1
            body = made.jwks.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", made.port), JWKS)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield made
    server.shutdown()
    server.server_close()


@pytest.fixture
def served(issuer: Issuer, db_path: Path, tmp_path: Path) -> Iterator[HttpServer]:
    config = tmp_path / "writegate.toml"
    config.write_text(
        f'[serve.oauth]\nissuer = "{issuer.url}"\njwks_uri = "{issuer.url}/jwks.json"\n'
        'audience = "writegate-test"\n'
    )
    with http_server(published(db_path), env={"WRITEGATE_CONFIG": str(config)}) as running:
        yield running


# -- through the SDK's client, against a real server --------------------------------------


async def test_a_writer_token_writes_and_the_event_names_its_subject(
    issuer: Issuer, served: HttpServer
) -> None:
    async with http_agent(served.url, issuer.token()) as agent:
        out = await agent.call("write_node", WRITE)
    assert not out.is_error, out.data
    with EventLog(served.db, create=False) as log:
        [event] = log.read(after_seq=out.data["seq"] - 1, limit=1).events
    assert event.actor.agent == f"oauth:{SUBJECT}"
    assert event.actor.transport == "http"


async def test_a_tokens_file_token_keeps_working_beside_oauth(served: HttpServer) -> None:
    token = create_token(Path(f"{served.db}.tokens.json"), "static-agent", ("writer",))
    async with http_agent(served.url, token) as agent:
        out = await agent.call("write_node", WRITE)
    assert not out.is_error, out.data
    with EventLog(served.db, create=False) as log:
        [event] = log.read(after_seq=out.data["seq"] - 1, limit=1).events
    assert event.actor.agent == "static-agent"


async def test_a_reader_scope_reads_and_cannot_write(issuer: Issuer, served: HttpServer) -> None:
    async with http_agent(served.url, issuer.token(scope="writegate:reader")) as agent:
        tools = await agent.tool_names()
        assert "open_nodes" in tools
        assert "write_node" not in tools  # as for a tokens-file reader: no such tool


@pytest.mark.parametrize(
    "claims",
    [
        {"exp": int(time.time()) - 60},  # expired
        {"exp": int(time.time()) - 2},  # just expired: the leeway is for iat/nbf, not exp
        {"aud": "someone-else"},  # for another resource
        {"iss": "http://127.0.0.1:1"},  # from another authorization server
    ],
    ids=["expired", "just-expired", "wrong-audience", "wrong-issuer"],
)
async def test_a_bad_token_is_401_pointing_to_the_metadata(
    issuer: Issuer, served: HttpServer, claims: dict[str, Any]
) -> None:
    token = issuer.token(**claims)
    assert_refused(served, token)
    with pytest.raises(ExceptionGroup) as raised:  # the SDK client cannot even initialize
        async with http_agent(served.url, token) as agent:
            await agent.tool_names()
    assert raised.group_contains(MCPError)


def test_a_forged_signature_is_401(issuer: Issuer, served: HttpServer) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert_refused(served, issuer.token(key=other))  # same kid, another key
    good = issuer.token().split(".")
    assert_refused(served, ".".join([good[0], good[1], good[2][::-1]]))  # a mangled signature


def test_a_rotated_signing_key_is_accepted_at_once(issuer: Issuer, served: HttpServer) -> None:
    """A token whose kid the cached key set lacks fetches the key set again before it is
    refused (it was refused until a 30 s cooldown from the first fetch had passed)."""
    assert post_initialize(served, issuer.token()).status_code == 200  # k1, now cached
    retired = issuer.key
    issuer.rotate()
    assert post_initialize(served, issuer.token(kid="k2")).status_code == 200
    assert_refused(served, issuer.token(key=retired))  # k1 is no longer published


async def test_unknown_kids_fetch_the_key_set_at_most_once_a_while(
    issuer: Issuer, tmp_path: Path
) -> None:
    """Tokens naming kids nobody published cannot make the server hammer the issuer."""
    checker = verifier(
        tmp_path, issuer=issuer.url, jwks_uri=f"{issuer.url}/jwks", audience="writegate-test"
    )
    assert await checker.verify_token(issuer.token()) is not None
    issuer.rotate()
    assert await checker.verify_token(issuer.token(kid="k2")) is not None
    assert issuer.fetches == 2
    for attempt in range(5):
        assert await checker.verify_token(issuer.token(kid=f"nobody-{attempt}")) is None
    assert issuer.fetches == 2  # within the cooldown since k2's fetch: none more


def test_a_symmetric_or_unsigned_token_is_401(issuer: Issuer, served: HttpServer) -> None:
    claims = jwt.decode(issuer.token(), options={"verify_signature": False})
    # an HMAC token (the alg-confusion attack signs with a key the attacker knows)
    assert_refused(served, jwt.encode(claims, "k" * 32, algorithm="HS256", headers={"kid": "k1"}))
    assert_refused(served, jwt.encode(claims, "", algorithm="none"))


def test_a_token_granting_no_role_is_403_insufficient_scope(
    issuer: Issuer, served: HttpServer
) -> None:
    response = post_initialize(served, issuer.token(scope="openid profile"))
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope"')
    assert 'scope="writegate:writer ' in challenge
    assert f'resource_metadata="{metadata_url(served)}"' in challenge


def test_the_protected_resource_metadata_names_the_issuer(
    issuer: Issuer, served: HttpServer
) -> None:
    base = served.url.removesuffix("/mcp")
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        metadata = httpx2.get(base + path).json()
        assert metadata["authorization_servers"] == [issuer.url]
        assert metadata["resource"] == served.url
        assert "writegate:writer" in metadata["scopes_supported"]
    assert httpx2.get(metadata_url(served)).json()["authorization_servers"] == [issuer.url]


def post_initialize(served: HttpServer, token: str) -> httpx2.Response:
    hello = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}},
    }  # fmt: skip
    return httpx2.post(
        served.url, json=hello, headers={"Authorization": f"Bearer {token}", "Accept": ACCEPT}
    )


def metadata_url(served: HttpServer) -> str:
    return served.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")


def assert_refused(served: HttpServer, token: str) -> None:
    response = post_initialize(served, token)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'error="invalid_token"' in challenge
    assert f'resource_metadata="{metadata_url(served)}"' in challenge


# -- the verifier and the settings, in process ----------------------------------------------


def verifier(tmp_path: Path, **settings: Any) -> OAuthVerifier:
    store = TokenStore(tmp_path / "tokens.json")
    return OAuthVerifier(OAuthSettings(**settings), "http://127.0.0.1:1/mcp", store)


async def test_a_public_key_file_and_an_issuer_kept_as_written(tmp_path: Path) -> None:
    made = Issuer()
    pem = tmp_path / "issuer.pem"
    pem.write_text(made.public_pem())
    issuer = "https://tenant.example.org/"  # some issuers' ``iss`` ends in a slash
    checker = verifier(tmp_path, issuer=issuer, public_key=pem, audience="writegate-test")
    access = await checker.verify_token(made.token(iss=issuer))
    assert access is not None
    assert access.client_id == f"oauth:{SUBJECT}"
    assert access.scopes == ["role:writer"]
    assert access.subject == SUBJECT
    assert await checker.verify_token(made.token(iss=issuer.rstrip("/"))) is None
    assert await checker.verify_token(made.token(iss=issuer, sub="")) is None


async def test_a_shared_secret_only_when_configured(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s" * 40 + "\n")
    checker = verifier(tmp_path, issuer="https://as.example.org", secret_file=secret)
    claims: dict[str, Any] = {
        "iss": "https://as.example.org", "sub": "bob", "aud": "http://127.0.0.1:1/mcp",
        "exp": int(time.time()) + 60, "scp": ["writegate:auditor"],
    }  # fmt: skip
    access = await checker.verify_token(jwt.encode(claims, "s" * 40, algorithm="HS256"))
    assert access is not None
    assert access.scopes == ["role:auditor"]
    assert await checker.verify_token(jwt.encode(claims, "t" * 40, algorithm="HS256")) is None
    assert await checker.verify_token(Issuer().token(**claims)) is None  # RS256: not allowed
    secret.write_text("short")
    with pytest.raises(ValueError, match="32 bytes"):
        verifier(tmp_path, issuer="https://as.example.org", secret_file=secret)


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({}, "exactly one of"),
        ({"jwks_uri": "https://as.example.org/jwks", "public_key": "k.pem"}, "exactly one of"),
        ({"jwks_uri": "https://as.example.org/jwks", "algorithms": ["HS256"]}, "HS256"),
        ({"public_key": "k.pem", "algorithms": ["none"]}, "none"),
        ({"secret_file": "s", "algorithms": ["RS256"]}, "RS256"),
        ({"public_key": "k.pem", "scopes": {"writegate:writer": "owner"}}, "owner"),
        ({"public_key": "k.pem", "agent_prefix": "sso-"}, "agent_prefix"),
    ],
)
def test_settings_refuse_what_would_be_unsafe(settings: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        OAuthSettings(issuer="https://as.example.org", **settings)


def test_the_scopes_map_to_the_policys_roles() -> None:
    assert ROLES == policy.ROLES


def test_the_readme_oauth_settings_load(tmp_path: Path) -> None:
    [toml] = blocks(section("### OAuth"), "toml")
    config = tmp_path / "writegate.toml"
    config.write_text(toml)
    oauth = load_settings(config).serve.oauth
    assert oauth is not None
    assert oauth.issuer == "https://auth.example.org"
    assert oauth.audience == "https://memory.example.org/mcp"
    assert str(oauth.resource) == "https://memory.example.org/mcp"
    assert oauth.scopes["writegate:reviewer"] == "reviewer"
    assert "writegate:admin" not in oauth.scopes  # a table replaces the default mapping


def test_the_environment_configures_oauth(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no ./writegate.toml
    monkeypatch.setenv("WRITEGATE_SERVE__OAUTH__ISSUER", "https://as.example.org")
    monkeypatch.setenv("WRITEGATE_SERVE__OAUTH__JWKS_URI", "https://as.example.org/jwks")
    monkeypatch.setenv("WRITEGATE_SERVE__OAUTH__AUDIENCE", "api://writegate")
    oauth = load_settings().serve.oauth
    assert oauth is not None
    assert (oauth.issuer, oauth.audience) == ("https://as.example.org", "api://writegate")


def test_an_issuers_jwt_signs_in_at_the_desk(issuer: Issuer, served: HttpServer) -> None:
    desk = f"http://127.0.0.1:{served.port}/desk"
    with httpx2.Client(base_url=desk, timeout=30) as client:
        form = client.get("/signin").text
        check = form.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        token = issuer.token(scope="openid writegate:reader")
        signed = client.post("/signin", data={"csrf": check, "token": token})
        assert signed.status_code == 303, signed.text
        assert "Sign out" in client.get("/").text
