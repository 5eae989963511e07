"""The docs beside the code: generated parts up to date, nothing left undocumented."""

from __future__ import annotations

import subprocess
import sys

import click

from tests.conftest import ROOT
from writegate.cli.main import COMMANDS, load_command
from writegate.gate import ErrorCode
from writegate.gate.server.catalog import BUILTIN_TOOLS

DOCS = ROOT / "docs"
GENERATED = ["cli.md", "mcp-tools.md", "errors.md", "python-api.md"]


def test_the_generated_parts_are_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cogapp", "-I", str(DOCS), "--check", "--diff"]
        + [str(DOCS / name) for name in GENERATED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"run `make docs`:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"


def test_every_command_and_option_is_documented() -> None:
    text = (DOCS / "cli.md").read_text()
    missing = []
    for name in COMMANDS:
        command = load_command(name)
        commands = [(name, command)]
        if isinstance(command, click.Group):
            commands += [(f"{name} {s}", c) for s, c in command.commands.items()]
        for path, each in commands:
            if f"### `writegate {path}`" not in text:
                missing.append(path)
            for param in each.params:
                if getattr(param, "hidden", False):  # an old spelling kept working, not taught
                    continue
                for opt in getattr(param, "opts", []):
                    if opt.startswith("--") and f"`{opt}" not in text and f" {opt}" not in text:
                        missing.append(f"{path} {opt}")
    assert missing == []


def test_every_tool_and_error_code_is_documented() -> None:
    tools = (DOCS / "mcp-tools.md").read_text()
    errors = (DOCS / "errors.md").read_text()
    assert [s.name for s in BUILTIN_TOOLS if f"### `{s.name}`" not in tools] == []
    assert [c.value for c in ErrorCode if f"`{c.value}`" not in errors] == []


def test_the_readme_links_the_docs() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in ("docs/design.md", "docs/cli.md", "docs/mcp-tools.md", "docs/python-api.md"):
        assert f"]({page})" in readme, page


def test_the_design_names_every_module() -> None:
    """docs/design.md's table of parts names each part's modules and sub-packages, so a new
    module cannot land without saying where it belongs."""
    design = (DOCS / "design.md").read_text()
    folders = [ROOT / name for name in ("eventlog", "gate", "projections", "language")]
    missing = [
        str(path.relative_to(ROOT))
        for folder in folders
        for path in sorted(folder.iterdir())
        if not path.name.startswith(("_", "."))
        and (path.suffix == ".py" or (path / "__init__.py").exists())
        and f"`{path.stem}`" not in design
        and f"`{path.name}/`" not in design
    ]
    assert missing == []
