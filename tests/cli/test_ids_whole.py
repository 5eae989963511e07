"""Ids are printed whole and typed in part: ``review list`` and ``log`` never cut an id, a
seq or a confidence however narrow the terminal, and every command taking a proposal or
merge id takes any prefix naming one (an ambiguous one is one line saying how many)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.models import ProposedResult

WRITER = Actor(agent="ingest-bot", transport="api")
NARROW = {"COLUMNS": "60"}
HELD = 17  # more proposals than hex digits: two share a first digit


@pytest.fixture
def held(tmp_path: Path) -> tuple[Path, list[str]]:
    """A log whose writes of confidence below 0.6 wait for review, and 17 of them."""
    schema = tmp_path / "schema.yaml"
    schema.write_text(
        "nodes:\n  Person:\n    merge_keys: [name]\n    review_below: 0.6\n"
        "    properties: {name: {type: string}}\n"
    )
    db = tmp_path / "log.db"
    proposals = []
    with Gate.open(db, create=True) as gate:
        gate.publish_schema(schema)
        for i in range(HELD):
            result = gate.write_node(
                actor=WRITER,
                label="Person",
                merge_keys={"name": f"P{i}"},
                source="chat",
                extraction_method="llm",
                reliability=0.123456789,
            )
            assert isinstance(result, ProposedResult)
            proposals.append(result.proposal)
    return db, proposals


def test_review_list_prints_every_id_whole_in_a_narrow_terminal(
    held: tuple[Path, list[str]],
) -> None:
    db, proposals = held
    listed = writegate(db, "review", "list", env=NARROW).stdout
    lines = listed.splitlines()
    for proposal in proposals:
        assert any(proposal in line for line in lines), (proposal, listed)


def test_log_lines_are_wrapped_never_cut(held: tuple[Path, list[str]]) -> None:
    db, _ = held
    shown = writegate(db, "log", "--type", "write.proposed", env=NARROW).stdout
    assert max(len(line) for line in shown.splitlines()) <= 60  # the terminal's width
    assert "…" not in shown
    events = writegate(db, "log", "--type", "write.proposed", "--json").stdout.splitlines()
    assert len(events) == HELD
    for event in map(json.loads, events):
        confidence = event["provenance"]["confidence"]
        assert len(repr(confidence)) > 8  # more digits than a cut would keep
        assert f"confidence={confidence!r}" in shown


def test_a_proposal_is_named_by_any_prefix_of_its_id(held: tuple[Path, list[str]]) -> None:
    db, proposals = held
    unique = proposals[0]
    shortest = next(n for n in range(1, 33) if [p[:n] for p in proposals].count(unique[:n]) == 1)
    prefix = unique[: max(shortest, 4)]
    shown = json.loads(writegate(db, "review", "show", prefix, "--format", "json").stdout)
    assert shown["proposal"] == unique
    decided = writegate(db, "review", "reject", prefix, "--format", "json").stdout
    assert json.loads(decided)["proposal"] == unique


def test_an_ambiguous_prefix_is_one_line_saying_how_many(held: tuple[Path, list[str]]) -> None:
    db, proposals = held
    digit, count = Counter(p[0] for p in proposals).most_common(1)[0]
    assert count >= 2
    for command in (("review", "show"), ("review", "approve")):
        refused = writegate(db, *command, digit, code=2)
        assert refused.stderr == (
            f"error: proposal id {digit!r} is the start of {count} proposals: type more of it\n"
        )
    assert json.loads(writegate(db, "review", "list", "--format", "json").stdout)["pending"] == HELD


def test_unmerge_takes_a_prefix_of_the_merge_id(tmp_path: Path) -> None:
    schema = tmp_path / "schema.yaml"
    schema.write_text("nodes:\n  Person:\n    merge_keys: [name]\n")
    db = tmp_path / "log.db"
    claim = ("--source", "hr", "--method", "api")
    writegate(db, "init", "--schema", str(schema))
    for name in ("Ada", "ada"):
        writegate(db, "write", "node", f"Person:name={name}", *claim)
    merged = writegate(db, "merge", "Person:name=Ada", "Person:name=ada", *claim, "--json")
    merge = json.loads(merged.stdout)["merge"]
    undone = writegate(db, "unmerge", merge[:6], *claim, "--format", "json")
    assert json.loads(undone.stdout)["merge"] == merge


def test_the_reports_review_queue_keeps_ids_and_confidences_whole(
    held: tuple[Path, list[str]],
) -> None:
    db, proposals = held
    shown = writegate(db, "report", env={"COLUMNS": "80"}).stdout
    assert all(proposal in shown for proposal in proposals), shown
    assert "…" not in shown  # a cell cut short (a confidence, a target) ends so
