"""``[recall]`` as an operator sets it: ``rrf_k`` is the constant graph_query fuses its
rankings with, in the file or the environment, and a bad value is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import SEED_SCHEMA
from writegate.gate import Gate


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    with Gate.open(path) as gate:
        gate.publish_schema(SEED_SCHEMA)
        written = gate.write_node(
            label="Person", merge_keys={"name": "Ada"}, source="hr", extraction_method="parsed"
        )
        assert written.status == "written", written
    return path


def first_seed_score(db: Path, *args: str, env: dict[str, str] | None = None) -> float:
    """The fused score of the first seed, without the feedback factor (0.75: no feedback)."""
    asked = writegate(db, *args, "query", "Ada", "--format", "json", env=env)
    return float(json.loads(asked.stdout)["seeds"][0]["score"]) / 0.75


def test_rrf_k_comes_from_the_recall_settings(db: Path, tmp_path: Path) -> None:
    assert first_seed_score(db) == pytest.approx(1 / (60 + 1))  # one ranking found Ada, first
    toml = tmp_path / "writegate.toml"
    toml.write_text("[recall]\nrrf_k = 1\n")
    assert first_seed_score(db, "--config", str(toml)) == pytest.approx(1 / (1 + 1))
    env = {"WRITEGATE_RECALL__RRF_K": "9"}
    assert first_seed_score(db, env=env) == pytest.approx(1 / (9 + 1))


def test_a_bad_rrf_k_is_one_line(db: Path) -> None:
    done = writegate(db, "query", "Ada", code=2, env={"WRITEGATE_RECALL__RRF_K": "0"})
    assert done.stderr.count("\n") == 1
    assert "rrf_k" in done.stderr
