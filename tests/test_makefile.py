"""The Makefile's two quick-start targets install what each needs: ``make run`` only the
package and its dependencies, ``make test`` the dev extras too (ArcadeDB's Java runtime, mypy), after torch's CPU build."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.conftest import ROOT


def installs(target: str) -> list[str]:
    """The pip installs ``make TARGET`` would run from scratch (``-n``: printed, not run)."""
    make = shutil.which("make")
    if make is None:
        pytest.fail("make is not installed")
    printed = subprocess.run(
        [make, "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [
        line.split("--quiet ", 1)[1]
        for line in printed.splitlines()
        if "pip install " in line and "--upgrade pip" not in line
    ]


def test_make_run_installs_no_dev_extras() -> None:
    assert installs("run") == ["-e ."]


def test_make_test_adds_the_dev_extras() -> None:
    assert installs("test") == ["-e .", "torch==2.13.0", "-e '.[dev]'"]


@pytest.mark.slow
def test_make_run_shows_its_refusals_as_intended_without_make_errors() -> None:
    """``make run`` writes three things the gate must refuse; each is said to be refused as
    intended, and make prints no error line of its own (``-o``: the venv is not remade)."""
    make = shutil.which("make")
    assert make is not None, "make is not installed"
    # as typed in a shell: under ``make test`` the outer make's variables would have this
    # one print "make[1]: Entering directory …"
    shell = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    done = subprocess.run(
        [make, "-o", ".venv/bin/writegate", "run"],
        cwd=ROOT,
        env=shell,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed
    assert [line for line in printed.splitlines() if line.startswith("make")] == []
    assert printed.count("refused, as intended: ") == 3
    assert "verified up to seq 11" in printed
