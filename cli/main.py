"""The ``writegate`` command: a thin face over the Python API.

Every command calls the ``Gate`` / ``EventLog`` method of the same name; the CLI
only parses arguments and prints. Errors are one line on stderr and a non-zero
exit: 1 for a rejected write or a failed check, 2 for usage mistakes.

Commands live in modules by concept and are imported only when run: ``COMMANDS``
names each one's module and its one-line help, so ``writegate --help`` and
``writegate write node …`` load neither the MCP SDK nor the Bolt driver. (A test
checks each line against the command's own docstring.)
"""

from __future__ import annotations

import importlib
import sqlite3
import sys
from pathlib import Path
from typing import Any

import click

from writegate.cli.common import DB_ENV, Context, fail

# name -> ("module:attribute", one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("writes:init", "Create the log (if missing) and optionally publish a schema to it."),
    "schema": ("schema:schema", "Publish and inspect schemas."),
    "write": ("writes:write", "Write through the gate as the operator."),
    "delete": (
        "writes:delete",
        "Delete through the gate (deletions are events too; history keeps everything).",
    ),
    "log": (
        "log:log",
        "List events, oldest first, filtered and paginated (continue with --after).",
    ),
    "verify": ("verify:verify", "Check that the history is what was written."),
    "prove": (
        "prove:prove",
        "Prove a saved graph_query ANSWER against this log (a backup taken later will do).",
    ),
    "copy": (
        "copy:copy",
        "Copy a log into another database, event by event, each event checked.",
    ),
    "backup": (
        "backup:backup",
        "Copy the log while agents write, verify the copy, and copy the tokens file beside it.",
    ),
    "audit": (
        "audit:audit",
        "The provenance trail: who wrote what, when, from which source, how trusted.",
    ),
    "show": (
        "audit_show:show",
        "A node or relationship as it stands, or stood; an observation as kept.",
    ),
    "review": ("review:review", "Writes held for review: list, show, approve, reject."),
    "jobs": (
        "jobs:jobs",
        "Long work (rebuild, replay, backup, copy, import) as jobs: list, show, cancel, resume.",
    ),
    "improve": (
        "improve:improve",
        "Feedback on an answer: the nodes and relationships it used move their weight.",
    ),
    "merge": ("merge:merge", "Fold a duplicate node into a survivor (undo with unmerge)."),
    "forget": (
        "forget:forget",
        "Erase a personal node's data: its sealed values, read-model rows and refusals.",
    ),
    "optimize": (
        "optimize:optimize",
        "Merge the text index's structures so that searches seek fewer of them.",
    ),
    "retain": (
        "retain:retain",
        "Forget superseded personal values and personal observations' text past retention.",
    ),
    "retract": (
        "retract:retract",
        "Take back what a source, agent, method or observation said (undo with unretract).",
    ),
    "unretract": (
        "retract:unretract",
        "Undo a retraction: each fact it changed put back, values, supports and confidences.",
    ),
    "migrate": (
        "migrate:migrate",
        "Write the log again into DEST with its personal values sealed, as the schema declares.",
    ),
    "unmerge": (
        "merge:unmerge",
        "Undo a merge: the duplicate returns with its values, relationships and writers.",
    ),
    "report": (
        "audit:report",
        "One page an auditor can hand on: size, chain, who wrote and who was refused, drift.",
    ),
    "import": (
        "imports:import_group",
        "Bring an existing agent memory under the gate (every item a gated write).",
    ),
    "serve": (
        "serve:serve",
        "Serve the gate to agents over MCP (stdio by default, or --http with bearer tokens).",
    ),
    "token": (
        "tokens:token",
        "Bearer tokens for the HTTP transport (the file keeps only their SHA-256).",
    ),
    "status": ("stores:status_command", "Each projection's checkpoint, the log head and the lag."),
    "replay": (
        "stores:replay_command",
        "Apply the log to projection NAME (from its checkpoint by default).",
    ),
    "rebuild": (
        "stores:rebuild_command",
        "Reset projection NAME and replay the whole log into it.",
    ),
    "follow": (
        "stores:follow_command",
        "Keep projections caught up as events arrive, until SIGINT or SIGTERM.",
    ),
    "export": (
        "export:export_group",
        "Pictures of the graph (dot, graphml, mermaid) and the PROV-O projection.",
    ),
    "observe": (
        "observe:observe",
        "Keep TEXT (what was read or heard) as an observation and print its id.",
    ),
    "search": (
        "read:search",
        "Nodes whose words begin with TEXT's words, most relevant first, with a few neighbours.",
    ),
    "open": (
        "read:open_command",
        "The named nodes, their neighbours and the edges between, now or as they stood.",
    ),
    "neighbors": (
        "read:neighbors",
        "The nodes within --depth hops of one node (both directions), and the edges between.",
    ),
    "query": (
        "query:query",
        "Ask the graph a question in words: ranked facts, their provenance and why.",
    ),
    "path": ("read:path", "The shortest path between two nodes (edges taken in either direction)."),
    "desk": (
        "desk:desk",
        "Open a read-only desk on the log in a browser, on loopback (no action anywhere).",
    ),
}


def load_command(name: str) -> click.Command:
    """Import the module that holds command ``name`` and return the command."""
    target, _ = COMMANDS[name]
    module, _, attribute = target.partition(":")
    command = getattr(importlib.import_module(f"writegate.cli.{module}"), attribute)
    assert isinstance(command, click.Command), target
    return command


GLOBAL_OPTIONS = ("--db", "--schema-file", "--as", "--config", "--scope")


class LazyGroup(click.Group):
    """A group whose subcommands are imported when one runs (or its own help is asked for)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def invoke(self, ctx: click.Context) -> Any:
        """A SQLite error met mid-command (a page found damaged) said naming the log; an
        option of writegate itself given after the command said where it goes."""
        try:
            return super().invoke(ctx)
        except sqlite3.DatabaseError as exc:
            fail(f"{ctx.params['db']}: {exc}")
        except click.NoSuchOption as exc:
            if exc.option_name not in GLOBAL_OPTIONS:
                raise
            path = exc.ctx.command_path if exc.ctx is not None else "writegate COMMAND"
            fail(
                f"{exc.option_name} is an option of writegate itself: it goes before the "
                f"command (writegate {exc.option_name} … {path.partition(' ')[2]} …)",
                2,
            )

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from ``COMMANDS``: help without importing every command."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, _shorten(COMMANDS[name][1], limit)) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 3, 10)].rstrip() + "..."


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="writegate")
@click.option(
    "--db",
    envvar=DB_ENV,
    default="writegate.db",
    show_default=True,
    help=f"The log: a SQLite file or a postgresql:// address (env {DB_ENV}).",
)
@click.option(
    "--schema-file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="WRITEGATE_SCHEMA_FILE",
    help="Check writes against this file instead of the schema published in the log.",
)
@click.option("--as", "operator", help="Operator name recorded as the actor (default: OS user).")
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="WRITEGATE_CONFIG",
    help="Projections and schema source (default: ./writegate.toml if present).",
)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    metavar="NAME",
    help="Read as an agent granted only these scopes (repeat it; default: every scope): a "
    "read of the whole log (log, audits, report, show) is then refused, as over MCP.",
)
@click.pass_context
def cli(
    click_ctx: click.Context,
    db: str,
    schema_file: Path | None,
    operator: str | None,
    config: Path | None,
    scopes: tuple[str, ...],
) -> None:
    """writegate: schema-checked, provenance-stamped writes to a shared graph memory."""
    click_ctx.obj = Context(db, schema_file, operator, config, frozenset(scopes) or None)


INTERRUPTED = (
    "interrupted: a write under way was not made (a write, a batch, is all or none); long "
    "work — an import, a rebuild — keeps what it finished and resumes when run again"
)


def main(args: list[str] | None = None) -> None:
    """The command line (``args``, else ``sys.argv``), its errors one line each: click's own
    (usage) as click shows them, and Ctrl-C as what became of the work — click's
    ``Aborted!`` says nothing of it."""
    for word in sys.argv[1:] if args is None else args:
        if not word.isascii() and _not_utf8(word):  # bytes the OS gave as they were
            fail(f"{word.encode(errors='surrogateescape')!r} is not UTF-8: say it in UTF-8", 2)
    try:
        code = cli.main(args, prog_name="writegate", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, click.exceptions.Abort) as exc:
        if isinstance(exc.__cause__, EOFError):
            fail("aborted: no answer (the input ended)")
        fail(INTERRUPTED if exc.__cause__ or isinstance(exc, KeyboardInterrupt) else "aborted", 130)
    except Exception as exc:  # the log failing mid-command (a PostgreSQL grant missing, ...)
        from writegate.eventlog.errors import EventLogError

        if not isinstance(exc, EventLogError):
            raise
        fail(str(exc))
    sys.exit(code if isinstance(code, int) else 0)


def _not_utf8(word: str) -> bool:
    try:
        word.encode()
    except UnicodeEncodeError:
        return True
    return False
