"""The ``writegate`` command run inside the test's process, as sqlite-utils' tests run theirs.

A command run here is the console script's own ``main`` with its arguments, its streams
and environment swapped by click's ``CliRunner.isolation``: the same parsing, the same
one-line errors and exit codes, the same files. What it saves is the process — about a
second of start-up each, over a thousand times a run. A test that needs the process
boundary (a kill, a signal, a lock held by another process, a server, the installed
script's start-up, a pasted shell line) or that runs until signalled (``serve``,
``follow``) starts ``tests.server.harness.WRITEGATE`` instead.

An exception escaping ``main`` is raised, not turned into an exit code: in a process it
would be a traceback, which a command must never print.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from contextlib import chdir, nullcontext
from pathlib import Path

from click.testing import CliRunner

from writegate.cli.main import main

_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # what ``follow`` and ``log --follow`` take over


def run(
    args: Sequence[str],
    *,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``writegate ARGS`` as a finished process would report it (its exit code and the text
    it printed on each stream)."""
    words = [str(word) for word in args]
    code, handlers = 0, [(number, signal.getsignal(number)) for number in _SIGNALS]
    with (
        chdir(cwd) if cwd is not None else nullcontext(),
        CliRunner().isolation(input=input, env=_changed(env)) as (out, err, _),
    ):
        said = logging.StreamHandler(sys.stderr)  # a process's warnings, with no handler set
        said.setLevel(logging.WARNING)
        logging.getLogger().addHandler(said)
        try:
            main(words)
        except SystemExit as exc:
            code = _exit_code(exc.code)
        finally:
            logging.getLogger().removeHandler(said)
            for number, handler in handlers:
                signal.signal(number, handler)
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return subprocess.CompletedProcess(["writegate", *words], code, stdout, stderr)


def _changed(env: Mapping[str, str] | None) -> dict[str, str | None] | None:
    """What ``env`` (a whole environment, as ``subprocess`` takes it, or some variables)
    changes of this process's: variables it lacks are removed only if it is whole."""
    if env is None:
        return None
    changed: dict[str, str | None] = {
        name: value for name, value in env.items() if os.environ.get(name) != value
    }
    if "PATH" in env:  # a whole environment: what it leaves out is unset
        changed.update({name: None for name in os.environ if name not in env})
    return changed


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"): said on stderr, exit 1
    return 1
