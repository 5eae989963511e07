"""A newcomer follows the README literally, in a fresh clone: the quick start's ``make run``,
the install step, the first log, and an agent connecting as the client configuration says.

The README's install is ``make run``, which builds ``.venv`` in the clone. Installing every
dependency a second time would take minutes of the machine the suite shares, so the clone
is lent this checkout's ``.venv`` (a link; make is told not to remake it, ``-o``) — the
commands after it then run exactly as written, with ``writegate`` found only through the
README's own ``PATH`` line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import ROOT
from tests.readme import blocks, lines, section

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
CLIENTS = "## Connecting Claude, Cursor or the Inspector"


def _clone(tmp_path: Path) -> Path:
    git, make = shutil.which("git"), shutil.which("make")
    assert git is not None, "git is needed"
    assert make is not None, "make is needed"
    clone = tmp_path / "writegate"
    subprocess.run([git, "clone", "--quiet", str(ROOT), str(clone)], check=True)
    (clone / ".venv").symlink_to(ROOT / ".venv")
    return clone


def _shell(clone: Path, script: str) -> subprocess.CompletedProcess[str]:
    """``script`` run by bash in the clone, on a PATH without any venv (as a new shell)."""
    path = [p for p in os.environ["PATH"].split(os.pathsep) if ".venv" not in p]
    env = {"PATH": os.pathsep.join(path), "HOME": str(clone.parent), "LANG": "C.UTF-8"}
    return subprocess.run(
        ["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip


async def test_a_newcomer_follows_the_readme_in_a_fresh_clone(tmp_path: Path) -> None:
    clone = _clone(tmp_path)

    quick = lines(blocks(section("## Quick start"), "sh")[0])
    assert quick[0] == "make run"
    ran = _shell(clone, "make -o .venv/bin/writegate run")
    printed = ran.stdout + ran.stderr
    assert ran.returncode == 0, printed[-3000:]
    assert [line for line in printed.splitlines() if line.startswith("make")] == []
    assert printed.count("refused, as intended: ") == 3

    [install] = blocks(section("## Install"), "sh")
    installed = _shell(clone, install)
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.startswith("writegate")

    [first] = blocks(section("## First log, first agent"), "sh")
    for command in filter(None, first.splitlines()):  # each line as pasted, its comment too
        done = _shell(clone, f"{install}\n{command}")
        assert "Traceback" not in done.stderr, (command, done.stderr)
        refused = "# refused: " in command
        assert done.returncode == (1 if refused else 0), (command, done.stderr)
        if refused:
            code = command.split("# refused: ", 1)[1].strip()
            assert f"error: {code}: " in done.stderr, (command, done.stderr)
    assert (
        "verified up to seq 4"
        in _shell(clone, f"{install}\nwritegate --db memory.db verify").stdout
    )

    [config] = [b for b in blocks(section(CLIENTS), "json") if '"command"' in b]
    pasted = config.replace("/path/to/writegate", str(clone))
    server = json.loads(pasted.replace("/path/to/memory.db", str(clone / "memory.db")))
    server = server["mcpServers"]["writegate"]
    params = StdioServerParameters(command=server["command"], args=server["args"], cwd=clone)
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        label = tools["write_node"].input_schema["properties"]["label"]["description"]
        assert "Person" in label  # the schema's labels, named where an agent fills one in
        written = await client.call_tool(
            "write_node",
            {
                "label": "Person",
                "merge_keys": {"name": "Grace Hopper"},
                "source": "README",
                "extraction_method": "manual",
            },
        )
    assert not written.is_error, written
    assert written.structured_content is not None
    assert written.structured_content["seq"] == 5
