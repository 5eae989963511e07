"""The review lane through the Python API, on both backends: batches, retries, and an
approval judged by the checks of the day it is given."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from writegate.eventlog import Actor
from writegate.gate import BatchResult, Gate, Rejected, WriteNodeResult
from writegate.gate.models import ProposedResult
from writegate.gate.review import ReviewDecision

REVIEWER = Actor(agent="rev-1")
LLM: dict[str, Any] = {"source": "chat", "extraction_method": "llm", "reliability": 0.5}
HR: dict[str, Any] = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.95}


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Both backends."""
    return any_db


@pytest.fixture
def gate(db_path: str | Path) -> Iterator[Gate]:
    """People held below confidence 0.5 (an llm claim from a 0.5 source is 0.3)."""
    document = yaml.safe_load((ROOT / "fixtures" / "conflict_schema.yaml").read_text())
    document["nodes"]["Person"]["review_below"] = 0.5
    with Gate.open(db_path, default_actor=Actor(agent="writer-1")) as g:
        assert g.publish_schema(document).status == "published"
        yield g


def person(name: str, **properties: Any) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": properties}


def test_a_batch_holds_one_item_and_writes_the_others(gate: Gate) -> None:
    items = [
        {"op": "write_node", **person("Ada", role="engineer"), **HR},
        {"op": "write_node", **person("Eve", role="spy"), **LLM},
    ]
    out = gate.write_batch(items=items)
    assert isinstance(out, BatchResult)
    written, held = out.results
    assert isinstance(written, WriteNodeResult)
    assert isinstance(held, ProposedResult)
    assert [p.target for p in gate.reviews.queue().proposals] == ['Person{"name":"Eve"}']


def test_a_retried_held_write_is_the_same_proposal(gate: Gate) -> None:
    first = gate.write_node(**person("Eve", role="spy"), **LLM, idempotency_key="k-1")
    again = gate.write_node(**person("Eve", role="spy"), **LLM, idempotency_key="k-1")
    assert isinstance(first, ProposedResult)
    assert again == first
    assert gate.reviews.queue().pending == 1


def test_an_approval_is_checked_against_today(gate: Gate) -> None:
    held = gate.write_node(**person("Ada", email="ada@example.org"), **LLM)
    assert isinstance(held, ProposedResult)
    # meanwhile a trusted source sets the email, whose policy is reject
    assert isinstance(
        gate.write_node(**person("Ada", email="ada@hr.example"), **HR), WriteNodeResult
    )
    refused = gate.reviews.decide(held.proposal, "approve", REVIEWER)
    assert isinstance(refused, Rejected)
    assert refused.error_code == "CONFLICT"
    assert gate.reviews.queue().pending == 1  # still waiting: it may yet be rejected
    decided = gate.reviews.decide(held.proposal, "reject", REVIEWER, "superseded by HR")
    assert isinstance(decided, ReviewDecision)
    assert gate.reviews.queue().pending == 0
    assert gate.verify().ok


def test_an_unknown_proposal_is_named(gate: Gate) -> None:
    out = gate.reviews.decide("nope", "approve", REVIEWER)
    assert isinstance(out, Rejected)
    assert out.error_code == "PROPOSAL_NOT_PENDING"
    assert "no such proposal" in out.message
