"""``schema diff`` names the changes that change behaviour without invalidating anything —
a review rule that holds every manual write, a resolution policy made bolder — and says how
many live nodes each would have caught; and a new version is never "no changes"."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT, person, seed_document
from writegate.gate import Gate, WriteNodeResult
from writegate.gate.schema import caught
from writegate.gate.schema.publishing import diff_with_log


@pytest.fixture
def live(db_path: Path) -> Iterator[Gate]:
    """Seed 000's schema, with three people written by hand."""
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(seed_document()).status == "published"
        for name in ("Ada Lovelace", "Alan Turing", "Grace Hopper"):
            assert isinstance(
                gate.write_node(**person(name, extraction_method="manual")), WriteNodeResult
            )
        yield gate


def _lines(gate: Gate, document: dict[str, Any]) -> list[str]:
    return diff_with_log(gate.log, gate.state, document).describe()


def test_a_review_rule_holding_every_manual_write_is_named_with_what_it_would_hold(
    live: Gate,
) -> None:
    document = seed_document()
    document["review_rules"] = [{"extraction_methods": ["manual"]}]
    lines = _lines(live, document)
    assert "  (no changes)" not in lines
    assert (
        "  + review rules: new rule holds manual writes, whatever its label or type, always"
        in lines
    )
    [held] = [line for line in lines if line.startswith("  Person: ")]
    assert held.startswith("  Person: 3 of 3 nodes were last written as the new rule would hold")


def test_a_review_rule_elsewhere_holds_nothing_live(live: Gate) -> None:
    document = seed_document()
    document["review_rules"] = [{"extraction_methods": ["llm"], "labels": ["Organization"]}]
    diff = diff_with_log(live.log, live.state, document)
    assert [c.kind for c in diff.changes] == ["review_rule_added"]
    assert [i for i in diff.impact if i.outcome == "held"] == []


def test_resolution_made_automatic_is_named_with_the_duplicates_it_would_catch(
    db_path: Path,
) -> None:
    proposing = seed_document()
    proposing["nodes"]["Person"]["resolution"] = {"policy": "propose"}
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(proposing).status == "published"
        for name in ("Alan Turing", "Alan Turing Jr", "Grace Hopper"):
            written = gate.write_node(**person(name, resolution="new"))
            assert isinstance(written, WriteNodeResult), written
        automatic = copy.deepcopy(proposing)
        automatic["nodes"]["Person"]["resolution"]["policy"] = "auto"
        diff = diff_with_log(gate.log, gate.state, automatic)
    lines = diff.describe()
    assert "  ~ label Person: resolution policy propose -> auto" in lines
    [caught] = [i for i in diff.impact if i.outcome == "duplicates"]
    assert (caught.name, caught.live, caught.caught) == ("Person", 3, 2)
    assert "have a probable duplicate under resolution policy auto" in caught.describe()


def test_a_large_label_is_sampled_evenly_and_says_so(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(caught, "SCORED", 5)  # a label of more nodes than this is "large"
    proposing = seed_document()
    proposing["nodes"]["Person"]["resolution"] = {"policy": "propose"}
    names = ("Alan Turing", "Alan Turing Jr", "Ada Lovelace", "Ada Lovelace Jr", "Grace Hopper")
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(proposing).status == "published"
        others = (
            "Barbara Liskov",
            "Donald Knuth",
            "Edsger Dijkstra",
            "Ken Thompson",
            "Niklaus Wirth",
        )
        for name in (*names, *others):
            written = gate.write_node(**person(name, resolution="new"))
            assert isinstance(written, WriteNodeResult), written
        automatic = copy.deepcopy(proposing)
        automatic["nodes"]["Person"]["resolution"]["policy"] = "auto"
        diff = diff_with_log(gate.log, gate.state, automatic)
    [found] = [i for i in diff.impact if i.outcome == "duplicates"]
    # every other node in identity order: Ada Lovelace Jr, Alan Turing Jr, Barbara, Edsger, Ken
    assert (found.live, found.sampled, found.caught) == (10, 5, 2)
    said = "Person: 2 of 5 nodes sampled from 10 have a probable duplicate under resolution"
    assert found.describe().startswith(said)
    assert found.example == 'Person{"name":"Ada Lovelace Jr"}'


def test_a_new_version_is_never_no_changes(live: Gate) -> None:
    """Only the order of a list differs: nothing a write does changes, and it says so."""
    before = seed_document()
    before["nodes"]["Person"]["remaps_from"] = ["person", "human"]
    assert live.publish_schema(before).status == "published"
    after = copy.deepcopy(before)
    after["nodes"]["Person"]["remaps_from"] = ["human", "person"]
    diff = diff_with_log(live.log, live.state, after)
    assert diff.before != diff.after
    assert "  (no changes)" not in diff.describe()
    assert any("nothing a write does changes" in line for line in diff.describe())


def test_a_raised_review_floor_says_how_many_live_writes_it_would_have_held(live: Gate) -> None:
    document = seed_document()
    document["nodes"]["Person"]["review_below"] = 0.99
    document["relationships"]["KNOWS"]["review_below"] = 0.99  # nothing live to hold
    diff = diff_with_log(live.log, live.state, document)
    [held] = [i for i in diff.impact if i.outcome == "held"]
    assert (held.name, held.live, held.caught) == ("Person", 3, 3)
    assert held.describe().startswith(
        "Person: 3 of 3 nodes were last written with a confidence below the new review floor 0.99"
    )
