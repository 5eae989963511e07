"""``schema diff`` names changes of the conflict and review policies (issue 12): what a
change of a held fact does is part of what publishing a schema changes."""

from __future__ import annotations

import copy

import yaml

from tests.conftest import ROOT
from writegate.gate.schema import parse_document
from writegate.gate.schema.diff import diff_documents

CONFLICTS = yaml.safe_load((ROOT / "fixtures" / "conflict_schema.yaml").read_text())


def test_policy_changes_are_each_one_line() -> None:
    after = copy.deepcopy(CONFLICTS)
    after["nodes"]["Person"]["properties"]["email"]["conflict"] = "review"
    after["nodes"]["Person"]["review_below"] = 0.4
    after["relationships"]["KNOWS"]["functional"] = True
    after["half_lives"] = {"llm": "P30D"}
    changes = diff_documents(parse_document(CONFLICTS), parse_document(after))
    assert sorted(c.describe() for c in changes) == [
        "~ half_lives: none -> llm: P30D",
        "~ label Person.email: conflict: reject -> conflict: review",
        "~ label Person: review_below: default -> review_below: 0.4",
        "~ type KNOWS: functional: false -> functional: true",
    ]


def test_an_unchanged_policy_is_no_change() -> None:
    assert diff_documents(parse_document(CONFLICTS), parse_document(CONFLICTS)) == []
