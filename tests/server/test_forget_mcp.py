"""forget_subject over MCP, for admins alone, and ``writegate forget`` as its face: the CLI's
JSON is the tool's structured result, and a forgotten person's name is gone from the log."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError

from tests.cli.conftest import as_json, writegate
from tests.conftest import ROOT
from tests.server.conftest import published
from tests.server.harness import Served

pytestmark = pytest.mark.anyio
SCHEMA = ROOT / "fixtures" / "personal_schema.yaml"
CLAIM = {"source": "chat", "extraction_method": "api", "reliability": 0.8}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_admin_forgets_a_person_and_the_cli_says_the_same(db_path: Path) -> None:
    served = Served("stdio", published(db_path, SCHEMA))
    marker = f"MARK{os.urandom(6).hex()}"
    person: dict[str, Any] = {"label": "Person", "merge_keys": {"name": marker}, **CLAIM}
    asked = {"label": "Person", "keys": {"name": marker}, "reason": "asked", "dry_run": True}
    async with served.agent("chat-agent") as writer:
        written = await writer.call("write_node", {**person, "properties": {"role": "x"}})
        assert written.data["status"] == "written", written.data
        assert "forget_subject" not in await writer.tool_names()
        with pytest.raises(MCPError) as denied:
            await writer.call("forget_subject", asked)
        assert denied.value.error.message == "Unknown tool: forget_subject"
    async with served.agent("ops", roles=("admin",)) as admin:
        dry = (await admin.call("forget_subject", asked)).data
        cli = as_json(db_path, "forget", "Person", f"name={marker}", "--dry-run", "--json")
        assert cli == dry
        assert dry["dry_run"] is True
        assert dry["node"].startswith("Person~")
        assert len(dry["events"]) == 1
        done = (await admin.call("forget_subject", {**asked, "dry_run": False})).data
        assert done["seq"] == 3
    assert marker.encode() not in db_path.read_bytes()
    again = writegate(db_path, "forget", "Person", f"name={marker}")
    assert again.stdout.strip() == "forgot nothing: 0 events"


def test_forget_refuses_a_plain_label_in_one_line(db_path: Path) -> None:
    published(db_path, SCHEMA)
    refused = writegate(db_path, "forget", "Company:name=Acme", code=1)
    assert refused.stderr.count("\n") == 1
    assert "INVALID_ARGUMENT" in refused.stderr
    assert "Traceback" not in refused.stderr
