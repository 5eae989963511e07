"""An HTTP server whose policy grants writers the job tools, with an admin and a writer on
it: the set-up of the tests that show a job kind is an admin's alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from tests.server.harness import Agent, http_agent, http_server
from writegate.gate.server.policy import DEFAULT_POLICY_FILE
from writegate.gate.server.tokens import create_token


@asynccontextmanager
async def admin_and_writer(db: Path) -> AsyncIterator[tuple[Agent, Agent]]:
    """``ops`` (an admin) and ``ana`` (a writer Cedar lets use the job tools) on ``db``."""
    policy = db.with_name("policy.cedar")
    policy.write_text(
        DEFAULT_POLICY_FILE.read_text()
        + '\npermit (principal in Role::"writer", action in Action::"jobs", resource);\n'
    )
    tokens = Path(str(db) + ".tokens.json")
    with http_server(db, extra=("--policy", str(policy))) as server:
        async with (
            http_agent(server.url, create_token(tokens, "ops", ("admin",))) as admin,
            http_agent(server.url, create_token(tokens, "ana", ("writer",))) as ana,
        ):
            yield admin, ana
