"""retract_source / unretract_source over MCP, for reviewers and admins: the impact report
until confirmed, the same result as ``writegate retract --json``, and the undoing."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import MCPError

from tests.cli.conftest import as_json
from tests.retracted import NAMES, named, said, world
from tests.server.conftest import published
from tests.server.harness import Served
from writegate.gate import Gate

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_reviewer_sees_the_report_then_takes_a_source_back(db_path: Path) -> None:
    with Gate.open(published(db_path)) as gate:
        made = world(gate)
        before = {name: said(gate, name) for name in NAMES}
    served = Served("stdio", db_path)
    asked = {"source": "S", "reason": "S was a hoax"}
    async with served.agent("chat-agent") as writer:
        assert "retract_source" not in await writer.tool_names()
        with pytest.raises(MCPError) as denied:
            await writer.call("retract_source", asked)
        assert denied.value.error.message == "Unknown tool: retract_source"
    async with served.agent("rita", roles=("reviewer",)) as reviewer:
        report = (await reviewer.call("retract_source", asked)).data
        assert report["dry_run"] is True
        assert report["merges"] == [made["merge"]]
        cli = as_json(db_path, "retract", "--source", "S", "--dry-run", "--json")
        assert {**cli, "withdrawal": None} == {**report, "withdrawal": None}
        done = (await reviewer.call("retract_source", {**asked, "confirm": True})).data
        assert done["dry_run"] is False
        assert sorted(done["retracted"]) == [named("Ann"), named("Cleo")]
        undone = await reviewer.call("unretract_source", {"retraction": done["retraction"]})
        assert len(undone.data["restored"]) == 4
        again = await reviewer.call("unretract_source", {"retraction": done["retraction"]})
        assert again.data["error_code"] == "RETRACTION_NOT_FOUND"
    with Gate.open(db_path) as gate:
        assert {name: said(gate, name) for name in NAMES} == before
