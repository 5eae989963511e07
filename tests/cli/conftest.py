"""A history to read back (written once per module: the read commands change nothing), and
the ``writegate`` command run on a log: in the test's process (``tests.console``), or as the
installed console script in a process of its own where the process itself is under test."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from tests.conftest import SEED_SCHEMA
from tests.console import run
from tests.projections.history import ADA, T0, build_history, prov
from tests.server.harness import WRITEGATE
from writegate.gate import Gate


def writegate(
    db: Path | str, *args: str, code: int = 0, env: dict[str, str] | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    done = run(["--db", str(db), *args], env=env, **kwargs)
    assert done.returncode == code, (args, done.stdout, done.stderr)
    return done


def writegate_process(
    db: Path | str, *args: str, code: int = 0, env: dict[str, str] | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [WRITEGATE, "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
        **kwargs,
    )
    assert done.returncode == code, (args, done.stdout, done.stderr)
    return done


def as_json(db: Path | str, *args: str) -> Any:
    return json.loads(writegate(db, *args).stdout)


def write_history(db: Path) -> Path:
    """Seed 000's schema and ``tests.projections.history`` (stubs, a remap, deletions), then
    one more edge so that paths of two hops exist: Carol -KNOWS-> Alice -WORKS_FOR-> Initech."""
    with Gate.open(db) as gate:
        with freeze_time(T0 - timedelta(minutes=1)):
            gate.publish_schema(SEED_SCHEMA)
        build_history(gate)
        with freeze_time(T0 + timedelta(minutes=20)):
            gate.write_relationship(
                actor=ADA,
                type="KNOWS",
                from_label="Person",
                from_keys={"name": "Carol"},
                to_label="Person",
                to_keys={"name": "Alice"},
                **prov(),
            )
    return db


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_history(tmp_path_factory.mktemp("history") / "history.db")
