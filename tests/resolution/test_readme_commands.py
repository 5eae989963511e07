"""fixtures/resolution/README.md: its commands run as written and its numbers are the bench's."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.resolution.make_pairs import FOLDER, PAIRS
from tests.resolution.synth import ROOT
from writegate.gate.resolution import DEFAULT_THRESHOLDS
from writegate.gate.resolution.evaluate import (
    Policy,
    candidate_recall,
    counts,
    parse_pairs,
    score_pairs,
    split_of,
)

README = (FOLDER / "README.md").read_text(encoding="utf-8")
COMMANDS = README.split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_the_readme_commands_run(command: str) -> None:
    done = subprocess.run(
        ["bash", "-c", command], check=False, cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_the_readme_quotes_the_held_out_numbers() -> None:
    items = [
        s
        for s in score_pairs(parse_pairs(PAIRS.read_text(encoding="utf-8")))
        if split_of(s.pair) == "holdout"
    ]
    rows = [line.split("|")[1:-1] for line in README.splitlines() if line.startswith("| ")]
    quoted = {}
    policy = ""
    for cells in rows:
        policy = cells[0].strip() or policy
        quoted[policy, cells[1].strip()] = (cells[2].strip(), cells[3].strip())
    policies: tuple[tuple[Policy, float], ...] = (
        ("auto", DEFAULT_THRESHOLDS.auto),
        ("propose", DEFAULT_THRESHOLDS.propose),
    )
    for name, threshold in policies:
        for kind in ("all", "person", "organisation"):
            group = [i for i in items if kind in ("all", i.pair.kind)]
            c = counts(group, name, threshold)
            row = quoted[f"`{name}` ≥ {threshold:.2f}", kind]
            assert row == (f"{c.precision:.3f}", f"{c.recall:.3f}")
    recalls = " / ".join(
        f"{candidate_recall([i for i in items if k in ('all', i.pair.kind)]):.3f}"
        for k in ("all", "person", "organisation")
    )
    assert re.search(rf"\| {re.escape(recalls)} \|", README)
