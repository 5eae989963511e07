"""A client nobody here wrote: the MCP Inspector CLI lists writegate's tools and writes a node.

The Inspector is pinned in ``tests/peers/package.json`` (0.15.0, the newest whose CLI runs on
node 20) and installed by ``make test``; without it this test fails, it does not skip.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import ROOT
from tests.server.conftest import published
from tests.server.harness import WRITEGATE
from writegate.eventlog import EventLog

INSPECTOR = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-inspector"


def inspector(db: Path, *args: str) -> dict[str, object]:
    assert INSPECTOR.exists(), "run `make test` (it installs tests/peers with npm ci)"
    command = [
        str(INSPECTOR),
        "--cli",
        WRITEGATE,
        "--db",
        str(db),
        "serve",
        "--agent-id",
        "inspector",
    ]
    done = subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_inspector_lists_the_tools(db_path: Path) -> None:
    listed = inspector(published(db_path), "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}  # type: ignore[attr-defined]
    assert {"write_node", "write_relationship", "search_nodes", "get_schema"} <= names


def test_inspector_calls_write_node(db_path: Path) -> None:
    result = inspector(
        published(db_path),
        "--method",
        "tools/call",
        "--tool-name",
        "write_node",
        "--tool-arg",
        "label=Person",
        "--tool-arg",
        'merge_keys={"name": "Ada"}',
        "--tool-arg",
        "source=inspector-cli",
        "--tool-arg",
        "extraction_method=manual",
    )
    assert result.get("isError") in (None, False), result
    written = result["structuredContent"]
    assert written["status"] == "written"  # type: ignore[index]
    assert written["confidence"] == 0.375  # type: ignore[index]  # 0.5 x 0.75
    with EventLog(db_path, create=False) as log:
        event = log.read(after_seq=1).events[0]
    assert event.actor.agent == "inspector"
    assert event.payload["node"]["identity"] == 'Person{"name":"Ada"}'
