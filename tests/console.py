"""The ``writegate`` command run inside the test's process, as sqlite-utils' tests run theirs.

A command run here is the console script's own ``main`` with its arguments, its streams
and environment swapped by click's ``CliRunner.isolation``: the same parsing, the same
one-line errors and exit codes, the same files. What it saves is the process — about a
second of start-up each, over a thousand times a run. A test that needs the process
boundary (a kill, a signal, a lock held by another process, a server, the installed
script's start-up, a pasted shell line) or that runs until signalled (``follow``) starts
``tests.server.harness.WRITEGATE`` instead; a server is forked (``tests.forked``).

An exception escaping ``main`` is raised, not turned into an exit code: in a process it
would be a traceback, which a command must never print.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import chdir, contextmanager, nullcontext
from pathlib import Path

from click.testing import CliRunner

from writegate.cli import common
from writegate.cli.main import main

_OWN_LOGGERS = {"writegate", "uvicorn"}  # the loggers ``serve`` configures
_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # what ``follow`` and ``log --follow`` take over


def run(
    args: Sequence[str],
    *,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``writegate ARGS`` as a finished process would report it (its exit code and the text
    it printed on each stream), with ``env``'s variables set for the run."""
    words = [str(word) for word in args]
    code, handlers = 0, [(number, signal.getsignal(number)) for number in _SIGNALS]
    with (
        chdir(cwd) if cwd is not None else nullcontext(),
        CliRunner().isolation(input=input, env=env) as (out, err, _),
    ):
        said = common._lines.said  # ``serve`` sends its lines through its logging
        try:
            with _fresh_logging():
                main(words)
        except SystemExit as exc:
            code = _exit_code(exc.code)
        finally:
            common.say_through(said)
            for number, handler in handlers:
                signal.signal(number, handler)
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return subprocess.CompletedProcess(["writegate", *words], code, stdout, stderr)


@contextmanager
def _fresh_logging() -> Iterator[None]:
    """Logging as a new process has it, for the command's run: what a command or test
    configured before of writegate's loggers (``serve`` sets their handlers) is put aside,
    and what this run configures does not outlive it; a warning no handler takes is said
    on stderr, as Python's last-resort handler says it."""
    kept = [(logger, logger.handlers[:], logger.level, logger.propagate) for logger in _own()]
    for logger, *_ in kept:
        _bare(logger)
    said = logging.StreamHandler(sys.stderr)
    said.setLevel(logging.WARNING)
    logging.getLogger().addHandler(said)
    try:
        yield
    finally:
        logging.getLogger().removeHandler(said)
        for logger in _own():
            _bare(logger)
        for logger, handlers, level, propagate in kept:
            logger.handlers, logger.level, logger.propagate = handlers, level, propagate


def _own() -> list[logging.Logger]:
    return [
        logger
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger) and name.partition(".")[0] in _OWN_LOGGERS
    ]


def _bare(logger: logging.Logger) -> None:
    logger.handlers, logger.level, logger.propagate = [], logging.NOTSET, True


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"): said on stderr, exit 1
    return 1
