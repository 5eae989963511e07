"""What every command shares: the context, opening the gate, printing results and failing.

Errors are one line on stderr and a non-zero exit: 1 for a rejected write or a failed
check, 2 for usage mistakes.
"""

from __future__ import annotations

import getpass
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import click
import orjson

if TYPE_CHECKING:  # loaded when a command opens the log, not for --help
    from writegate.cli.config import Settings
    from writegate.cli.declared import Declared
    from writegate.eventlog import Actor, Log
    from writegate.gate import Gate, Rejected
    from writegate.gate.reads.recall import Nearest
    from writegate.projections.vectors.settings import EmbeddingSettings

DB_ENV = "WRITEGATE_DB"
DEFAULT_CONFIG = Path("writegate.toml")  # read by ``cli.config`` when no --config is given
SETTINGS_ENV = (  # the variables ``cli.config.Settings`` reads, one per field (a test keeps it)
    "WRITEGATE_PROJECTIONS",
    "WRITEGATE_SCHEMA_SOURCE",
    "WRITEGATE_SERVE",
    "WRITEGATE_LIMITS",
    "WRITEGATE_LOG__",
    "WRITEGATE_RECALL__",
    "WRITEGATE_EMBEDDINGS",
    "WRITEGATE_SCOPES__",
    "WRITEGATE_REJECTIONS__",
)


class Context:
    def __init__(
        self,
        db: str,
        schema_file: Path | None,
        operator: str | None,
        config: Path | None = None,
        scopes: frozenset[str] | None = None,
    ) -> None:
        self.db = db  # a file, or a postgresql:// address: ``eventlog.open_log`` tells them apart
        self.schema_file = schema_file
        self.config = config
        self.scopes = scopes  # the reads' grant (``--scope``; None: every scope)
        self.operator = operator or os.environ.get("WRITEGATE_OPERATOR") or _os_user()

    @property
    def db_file(self) -> Path | None:
        """The log's file, if it is in one (files such as tokens live beside it)."""
        return None if "://" in self.db else Path(self.db)

    @property
    def where(self) -> str:
        """The log's address for messages: a PostgreSQL password is never printed."""
        if self.db_file is not None:
            return self.db
        from writegate.eventlog.postgres import describe_dsn

        return describe_dsn(self.db)

    @cached_property
    def actor(self) -> Actor:
        from writegate.eventlog import Actor

        return Actor(agent=f"operator:{self.operator}", transport="cli")

    def settings(self) -> Settings:
        from writegate.cli.config import ConfigError, load_settings

        try:
            return load_settings(self.config)
        except ConfigError as exc:
            fail_each(exc.problems, 2)

    def configured(self) -> bool:
        """Whether there are settings to read (a config file, ``WRITEGATE_<SETTING>…``
        variables): reading them loads pydantic-settings (~40 ms), which a write without
        any configuration need not pay."""
        if self.config is not None or DEFAULT_CONFIG.exists():
            return True
        return any(  # a section's variables, or one that may be a mistyped section's
            name.upper().startswith(SETTINGS_ENV) or "__" in name.removeprefix("WRITEGATE_")
            for name in os.environ
            if name.startswith("WRITEGATE_")
        )

    def gate(self, *, create: bool = False, readonly: bool = False) -> Gate:
        settings = self.settings() if self.configured() else None
        gate = self._gate(settings, create=create, readonly=readonly)
        if settings is not None:
            gate.query = replace(gate.query, rrf_k=settings.recall.rrf_k)
            if settings.embeddings is not None:  # meaning, optionally
                gate.nearest = _meaning(settings.embeddings, gate.log)
            kept = settings.rejections
            if kept.keep is not None:
                gate.rejections.retention = kept.keep
            if kept.max_age_days is not None:
                gate.rejections.max_age = timedelta(days=kept.max_age_days)
        return gate

    def _gate(self, settings: Settings | None, *, create: bool, readonly: bool) -> Gate:
        from writegate.eventlog import open_log
        from writegate.eventlog.store import BUSY_TIMEOUT
        from writegate.gate import Gate
        from writegate.projections.state import StateProjection

        limits = settings.limits if settings is not None else None
        policy = settings.serve.unknown_label_policy if settings is not None else None
        busy = settings.log.busy_timeout if settings is not None else BUSY_TIMEOUT
        feedback = settings.recall.feedback() if settings is not None else None
        if self.schema_file is None and settings is not None and settings.schema_source:
            log = open_log(
                self.db,
                inline=[StateProjection()],
                create=create,
                readonly=readonly,
                busy_timeout=busy,
            )
            source = settings.schema_source.open(settings.projections)
            return Gate(
                log,
                source,
                default_actor=self.actor,
                limits=limits,
                unknown_label_policy=policy,
                feedback=feedback,
            )
        return Gate.open(
            self.db,
            create=create,
            schema_file=self.schema_file,
            default_actor=self.actor,
            readonly=readonly,
            limits=limits,
            unknown_label_policy=policy,
            busy_timeout=busy,
            feedback=feedback,
        )


def _meaning(embeddings: EmbeddingSettings, log: Log) -> Nearest:
    """The embedder's search as ``graph_query`` asks it. Its model loads at the first
    question; one that cannot be had then is that question refused ``EMBEDDER_UNAVAILABLE``
    (a tool's result with its code over MCP, one line on the command line)."""
    from writegate.gate.errors import ErrorCode, GateRejection
    from writegate.projections.vectors.settings import EmbedderUnavailable

    search = embeddings.searcher(log)

    def nearest(text: str, k: int, kind: str) -> Sequence[tuple[str, float]]:
        try:
            return search(text, k, kind)
        except EmbedderUnavailable as exc:
            details = {"provider": embeddings.provider}
            raise GateRejection(ErrorCode.EMBEDDER_UNAVAILABLE, str(exc), details) from exc

    return nearest


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


Kind = Literal["error", "note"]


def _echo(message: str, kind: Kind) -> None:
    click.echo(f"{kind}: {message}", err=True)


class _Lines:
    said: Callable[[str, Kind], None] = staticmethod(_echo)


_lines = _Lines()


def say_through(said: Callable[[str, Kind], None]) -> None:
    """Operator lines (errors, notes) go through ``said`` from now on: ``serve`` hands them
    to its logging once that is configured, so in JSON logs they are JSON lines too."""
    _lines.said = said


def note(message: str) -> None:
    _lines.said(message, "note")


def fail(message: str, code: int = 1) -> NoReturn:
    _lines.said(message, "error")
    sys.exit(code)


def fail_each(messages: Sequence[str], code: int = 1) -> NoReturn:
    """Every problem found, one ``error:`` line each."""
    for message in messages[:-1]:
        _lines.said(message, "error")
    fail(messages[-1], code)


@contextmanager
def opened(
    ctx: Context, *, create: bool = False, readonly: bool = False, whole_log: str | None = None
) -> Iterator[Gate]:
    """Open the gate, turning the ways that can fail into one clear line. Commands that only
    read pass ``readonly``: they work on a read-only copy and never write to the file. A
    command reading the whole log names itself (``whole_log``): it is refused to a grant of
    fewer than every scope (``cli.grants``)."""
    from writegate.eventlog import EventLog, EventLogError

    if ctx.db_file is not None and ctx.db_file.is_dir():
        fail(f"{ctx.db}: a folder, not a log: --db names the log's file ({ctx.db_file / 'x.db'})")
    if create and ctx.db_file is not None and not ctx.db_file.parent.is_dir():
        fail(f"{ctx.db}: no folder {ctx.db_file.parent} to make the log in (make it first)")
    try:
        gate = ctx.gate(create=create, readonly=readonly)
    except (FileNotFoundError, EventLogError, sqlite3.DatabaseError, ValueError) as exc:
        fail(str(exc))
    if isinstance(gate.log, EventLog) and gate.log.private_copy is not None:
        note(
            f"{gate.log.path} is on read-only media without its -shm, so it is read with its "
            f"-wal (commits not yet in the file) from a private copy in "
            f"{gate.log.private_copy.parent}"
        )
    try:
        if whole_log is not None:
            from writegate.cli.grants import whole_log as needs_every_scope

            needs_every_scope(ctx, gate, whole_log)
        yield gate
    finally:
        gate.close()


def emit_result(result: Any, *, text: bool = False) -> None:
    """Print a result as JSON — a rejection too, as the MCP tool returns it, so a script
    sees its details (the candidates, the disputed values) — and for a rejection one line
    on stderr and exit 1. A command printing ``text`` prints no JSON for a rejection: its
    line on stderr is all (``said=$(writegate observe …)`` must not capture a refusal)."""
    from writegate.gate import Rejected, dump

    if not (text and isinstance(result, Rejected)):
        click.echo(orjson.dumps(dump(result)).decode())
    if isinstance(result, Rejected):
        fail(refusal_line(result))


def refusal_line(refused: Rejected) -> str:
    """A refusal as its one line: its code and message, and what to do where the command
    line knows — for a value read as JSON where a string was not wanted, how it reads a
    bare value (``cli.declared``); for a limit, which setting raises it."""
    from writegate.cli.declared import QUOTING

    line = f"{refused.error_code}: {refused.message}"
    read_as_json = refused.details.get("got") not in (None, "str")
    if refused.error_code == "SCHEMA_TYPE_MISMATCH" and read_as_json:
        return f"{line} ({QUOTING})"
    if refused.error_code == "LIMIT_EXCEEDED" and (limit := refused.details.get("limit")):
        split = "; or write the file in parts" if limit == "max_batch_items" else ""
        return f"{line} (an operator raises it: {limit} under [limits] in writegate.toml{split})"
    return line


def parse_assignments(
    pairs: tuple[str, ...], what: str, declared: Declared | None = None
) -> dict[str, Any]:
    """``name=value`` pairs; the value is JSON if it parses (30, true, ["a"]), else a string
    — and the text as typed where the property is ``declared`` a string (``cli.declared``)."""
    from writegate.cli.declared import read_as_declared

    parsed: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            fail(f"{what} {pair!r} is not NAME=VALUE", 2)
        try:
            parsed[name] = read_as_declared(text, json.loads(text), declared, name)
        except json.JSONDecodeError:
            parsed[name] = text
    return parsed


def parse_time(_ctx: Any, _param: Any, value: str | None) -> datetime | None:
    """An ISO 8601 time (UTC unless it says otherwise), or ``now``."""
    if value is None:
        return None
    if value.strip().lower() == "now":
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 time (or now)") from None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    try:
        moment.astimezone(UTC)  # how the log compares and keeps it
    except OverflowError:
        raise click.BadParameter(f"{value!r} is outside the calendar in UTC") from None
    return moment


SEQ = click.IntRange(0, 2**63 - 1)  # a seq the log can hold: SQLite's largest integer


pass_ctx = click.make_pass_decorator(Context)
