"""OAuth for ``serve --http`` (issue 14, acceptance 8): an authorization server's JWT with
the writer scope writes, and the event names its subject; an expired token, one for
another audience, from another issuer or with a forged signature is a 401 that points to
the protected-resource metadata, which is served and names the issuer.

The authorization server here is a real HTTP server started by the test, serving the
JWKS of a key pair the test made; writegate fetches it as it would a real issuer's.
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
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.readme import blocks, section
from tests.server.conftest import published
from tests.server.harness import HttpServer, free_port, http_agent, http_server
from writegate.cli.config import load_settings
from writegate.eventlog import EventLog

pytestmark = pytest.mark.anyio
ACCEPT = "application/json, text/event-stream"


class Issuer:
    """A key pair and the JWKS an authorization server would publish for it."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        self.jwks = json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]})

    def token(self, key: Any = None, **overrides: Any) -> str:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "sub": "alice",
            "aud": "writegate-test",
            "iat": now,
            "exp": now + 300,
            "scope": "openid writegate:writer",
            **overrides,
        }
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": "k1"})


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    made = Issuer()

    class JWKS(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
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


@pytest.fixture
def served(issuer: Issuer, db_path: Path, tmp_path: Path) -> Iterator[HttpServer]:
    config = tmp_path / "writegate.toml"
    config.write_text(
        f'[serve.oauth]\nissuer = "{issuer.url}"\njwks_uri = "{issuer.url}/jwks.json"\n'
        'audience = "writegate-test"\n'
    )
    with http_server(published(db_path), env={"WRITEGATE_CONFIG": str(config)}) as running:
        yield running


async def test_a_writer_token_writes_and_the_event_names_its_subject(
    issuer: Issuer, served: HttpServer
) -> None:
    async with http_agent(served.url, issuer.token()) as agent:
        out = await agent.call(
            "write_node",
            {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "sso",
             "extraction_method": "api"},
        )  # fmt: skip
    assert not out.is_error, out.data
    with EventLog(served.db, create=False) as log:
        [event] = log.read(after_seq=out.data["seq"] - 1, limit=1).events
    assert event.actor.agent == "oauth:alice"
    assert event.actor.transport == "http"


@pytest.mark.parametrize(
    "claims",
    [
        {"exp": int(time.time()) - 60},  # expired
        {"aud": "someone-else"},  # for another resource
        {"iss": "http://127.0.0.1:1"},  # from another authorization server
    ],
    ids=["expired", "wrong-audience", "wrong-issuer"],
)
def test_a_bad_token_is_401_pointing_to_the_metadata(
    issuer: Issuer, served: HttpServer, claims: dict[str, Any]
) -> None:
    assert_refused(served, issuer.token(**claims))


def test_a_forged_signature_is_401(issuer: Issuer, served: HttpServer) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert_refused(served, issuer.token(key=other))  # same kid, another key


def test_a_symmetric_or_unsigned_token_is_401(issuer: Issuer, served: HttpServer) -> None:
    claims = jwt.decode(issuer.token(), options={"verify_signature": False})
    # an HMAC token (the alg-confusion attack signs with a key the attacker knows)
    assert_refused(served, jwt.encode(claims, "k" * 32, algorithm="HS256", headers={"kid": "k1"}))
    assert_refused(served, jwt.encode(claims, "", algorithm="none"))


def assert_refused(served: HttpServer, token: str) -> None:
    hello = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}},
    }  # fmt: skip
    response = httpx2.post(
        served.url, json=hello, headers={"Authorization": f"Bearer {token}", "Accept": ACCEPT}
    )
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert "resource_metadata=" in challenge
    assert "/.well-known/oauth-protected-resource/mcp" in challenge


def test_the_protected_resource_metadata_names_the_issuer(
    issuer: Issuer, served: HttpServer
) -> None:
    base = served.url.removesuffix("/mcp")
    metadata = httpx2.get(f"{base}/.well-known/oauth-protected-resource/mcp").json()
    assert metadata["authorization_servers"] == [issuer.url]
    assert metadata["resource"] == served.url


def test_the_readme_oauth_settings_load(tmp_path: Path) -> None:
    [toml] = blocks(section("### OAuth"), "toml")
    config = tmp_path / "writegate.toml"
    config.write_text(toml)
    oauth = load_settings(config).serve.oauth
    assert oauth is not None
    assert str(oauth.issuer).rstrip("/") == "https://auth.example.org"
    assert oauth.audience == "https://memory.example.org/mcp"
    assert oauth.scopes["writegate:reviewer"] == "reviewer"
