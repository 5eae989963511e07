"""The Makefile's two quick-start targets install what each needs: ``make run`` only the
package and its dependencies, ``make test`` the dev extras too (ArcadeDB's Java runtime, mypy)."""

from __future__ import annotations

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
    assert installs("test") == ["-e .", "-e '.[dev]'"]
