"""Review rules (issue 12): writes held by who sent them and how — here, any llm write from an
agent that has not yet had two writes approved — on both backends. A new agent earns trust
through approvals; other methods and other labels pass as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.readme import blocks, section
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.models import ProposedResult
from writegate.gate.review import ReviewDecision
from writegate.gate.schema import parse_document

BOT = Actor(agent="new-bot")
REVIEWER = Actor(agent="rev-1")
SCHEMA: dict[str, Any] = {
    "nodes": {"Person": {"merge_keys": ["name"]}, "Paper": {"merge_keys": ["title"]}},
    "review_rules": [
        {"extraction_methods": ["llm"], "labels": ["Person"], "until_approved": 2},
        {"extraction_methods": ["manual"]},  # every manual write, anywhere
    ],
}


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=BOT) as g:
        assert g.publish_schema(SCHEMA).status == "published"
        yield g


def person(gate: Gate, name: str, method: str = "llm") -> Any:
    return gate.write_node(label="Person", merge_keys={"name": name}, source="chat",
                           extraction_method=method, reliability=0.9)  # fmt: skip


def approve(gate: Gate, held: Any) -> None:
    assert isinstance(held, ProposedResult), held
    decided = gate.reviews.decide(held.proposal, "approve", REVIEWER)
    assert isinstance(decided, ReviewDecision), decided


def test_a_new_agent_is_reviewed_until_enough_writes_are_approved(gate: Gate) -> None:
    first = person(gate, "Ada")
    assert isinstance(first, ProposedResult)
    assert first.reason == (
        "held for review: a review rule holds llm writes from an agent until 2 of its "
        "writes are approved (new-bot has 0)"
    )
    approve(gate, first)
    approve(gate, person(gate, "Eve"))
    assert isinstance(person(gate, "Grace"), WriteNodeResult)  # trusted now
    # the same rule judges another agent on its own record
    other = gate.write_node(label="Person", merge_keys={"name": "Alan"}, source="chat",
                            extraction_method="llm", actor=Actor(agent="other-bot"))  # fmt: skip
    assert isinstance(other, ProposedResult)


def test_rules_cover_only_their_methods_and_labels(gate: Gate) -> None:
    assert isinstance(person(gate, "Ada", "api"), WriteNodeResult)  # not an llm write
    paper = gate.write_node(label="Paper", merge_keys={"title": "On Computable Numbers"},
                            source="chat", extraction_method="llm")  # fmt: skip
    assert isinstance(paper, WriteNodeResult)  # the llm rule covers Person only
    manual = gate.write_node(label="Paper", merge_keys={"title": "Intelligent Machinery"},
                               source="chat", extraction_method="manual")  # fmt: skip
    assert isinstance(manual, ProposedResult)
    assert "holds every manual write" in manual.reason
    approve(gate, manual)
    again = gate.write_node(label="Paper", merge_keys={"title": "Computing Machinery"},
                            source="chat", extraction_method="manual")  # fmt: skip
    assert isinstance(again, ProposedResult)  # until_approved 0: always


def test_a_rule_names_declared_labels(gate: Gate) -> None:
    rules = [{"extraction_methods": ["llm"], "labels": ["Persn"]}]
    out = gate.publish_schema({**SCHEMA, "review_rules": rules})
    assert isinstance(out, Rejected)
    assert out.error_code == "SCHEMA_INVALID"
    assert "'Persn' is neither a declared label nor a relationship type" in out.message


def test_the_readme_rules_are_a_schema() -> None:
    [text] = blocks(section("### The review lane"), "yaml")
    document = parse_document(
        {"nodes": {"Person": {"merge_keys": ["name"]}}, **yaml.safe_load(text)}
    )
    first, second = document.review_rules or []
    assert (first.extraction_methods, first.labels, first.until_approved) == (
        ["llm"],
        ["Person"],
        3,
    )
    assert (second.extraction_methods, second.until_approved) == (["manual"], 0)
