"""The reference parts of the docs, generated from the code by ``cog`` (as sqlite-utils does).

``make docs`` (or ``cog -r docs/*.md``) rewrites the marked blocks of the Markdown files in
``docs/``; ``tests/test_docs.py`` runs ``cog --check`` so a command, option, tool or error
code that the docs do not show fails the suite.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from writegate.cli.main import COMMANDS, cli, load_command  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.gate.errors import ERROR_MEANINGS  # noqa: E402
from writegate.gate.schema import FileSchemaSource  # noqa: E402
from writegate.gate.server.catalog import build_catalog  # noqa: E402
from writegate.gate.server.tools import ToolSpec  # noqa: E402

EXAMPLE_SCHEMA = ROOT / "fixtures" / "seed000_schema.yaml"
METHODS = ("api", "llm", "manual", "parsed")  # the default formula's


def _commands() -> Iterator[tuple[str, click.Command]]:
    """Every command, groups' subcommands included, by its full name."""
    for name in sorted(COMMANDS):
        command = load_command(name)
        yield name, command
        if isinstance(command, click.Group):
            for sub in sorted(command.commands):
                yield f"{name} {sub}", command.commands[sub]


def _usage(path: str, command: click.Command) -> str:
    with click.Context(cli, info_name="writegate") as parent:
        context = click.Context(command, info_name=path, parent=parent)
        return command.get_usage(context).removeprefix("Usage: ")


def cli_reference() -> str:
    """Every command: its usage, its help, each option."""
    out = [
        "The global options come before the command: `writegate [--db FILE] [--config FILE] "
        "[--as NAME] [--schema-file FILE] COMMAND …`.\n"
    ]
    with click.Context(cli, info_name="writegate") as context:
        out.append("| global option | meaning |\n|---|---|")
        out += [_option_row(p, context) for p in cli.get_params(context) if not _is_help(p)]
    for path, command in _commands():
        out.append(f"\n### `writegate {path}`\n")
        out.append(f"```\n{_usage(path, command)}\n```\n")
        out.append((command.help or "").strip().replace("\b\n", "") + "\n")
        with click.Context(command, info_name=path) as context:
            params = [
                p
                for p in command.get_params(context)
                if isinstance(p, click.Option) and not _is_help(p)
            ]
            if params:
                out.append("| option | meaning |\n|---|---|")
                out += [_option_row(p, context) for p in params]
    return "\n".join(out) + "\n"


def _is_help(param: click.Parameter) -> bool:
    return "--help" in param.opts


def _option_row(param: click.Parameter, context: click.Context) -> str:
    record = param.get_help_record(context)
    if record is None:
        return ""
    names, meaning = record
    return f"| `{names.replace('|', '/')}` | {meaning.replace('|', '/')} |"


def _type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"] if s.get("type") != "null")
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}"
    return str(kind)


def _tool(spec: ToolSpec) -> str:
    schema = spec.input_schema()
    required = set(schema.get("required", []))
    flags = (("read-only", spec.read_only), ("destructive", spec.destructive))
    hints = [hint for hint, on in flags if on]
    lines = [
        f"### `{spec.name}`\n",
        f"{spec.description}\n",
        f"Policy group `{spec.group}`; family `{spec.family}`"
        + (f"; {', '.join(hints)}" if hints else "")
        + f"; returns `{spec.result.__name__}` or a rejection.\n",
        "| argument | type | required | meaning |",
        "|---|---|---|---|",
    ]
    for name, field in schema.get("properties", {}).items():
        meaning = str(field.get("description", "")).replace("|", "/")
        lines.append(
            f"| `{name}` | {_type(field)} | {'yes' if name in required else ''} | {meaning} |"
        )
    return "\n".join(lines) + "\n"


def mcp_reference() -> str:
    """Every built-in tool, and the per-label tools of the seed 000 example schema."""
    catalog = build_catalog(FileSchemaSource(EXAMPLE_SCHEMA).load(), METHODS)
    return "\n".join(_tool(spec) for spec in catalog.values())


def error_reference() -> str:
    rows = [f"| `{code.value}` | {meaning} |" for code, meaning in ERROR_MEANINGS.items()]
    return "| code | meaning |\n|---|---|\n" + "\n".join(rows) + "\n"


def python_reference() -> str:
    """The ``Gate``'s public methods: signature and first line of each docstring."""
    out = []
    for name, member in inspect.getmembers(Gate, inspect.isfunction):
        if name.startswith("_"):
            continue
        signature = str(inspect.signature(member)).replace("self, ", "").replace("(self)", "()")
        doc = (inspect.getdoc(member) or "").split("\n\n")[0].replace("\n", " ")
        out.append(f"### `Gate.{name}`\n\n```python\n{name}{signature}\n```\n\n{doc}\n")
    opened = inspect.signature(Gate.open)
    about = inspect.getdoc(Gate.open)
    out.insert(0, f"### `Gate.open`\n\n```python\nopen{opened}\n```\n\n{about}\n")
    return "\n".join(out)
