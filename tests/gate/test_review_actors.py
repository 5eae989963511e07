"""Who did what in the review lane: a decision is its reviewer's event (``log --agent``,
``audit agent`` find it under the reviewer), while the write it approves stays its writer's
— the value's writer and provenance, and the approvals a review rule counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import as_json
from tests.conftest import ROOT
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.audit.auditor import Auditor
from writegate.gate.models import ProposedResult
from writegate.gate.review import ReviewDecision
from writegate.language import ProposalDecided, draft

WRITER, REVIEWER = Actor(agent="writer-1"), Actor(agent="rev-1", transport="cli")
LLM: dict[str, Any] = {"source": "chat", "extraction_method": "llm", "reliability": 0.5}
EVE = 'Person{"name":"Eve"}'


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Both backends: the decision's actor is the log's own record."""
    return any_db


@pytest.fixture
def gate(db_path: Path) -> Iterator[Gate]:
    """People held below confidence 0.5 (an llm claim from a 0.5 source is 0.3)."""
    document = yaml.safe_load((ROOT / "fixtures" / "conflict_schema.yaml").read_text())
    document["nodes"]["Person"]["review_below"] = 0.5
    with Gate.open(db_path, default_actor=WRITER) as g:
        assert g.publish_schema(document).status == "published"
        yield g


def approved(gate: Gate) -> ReviewDecision:
    held = gate.write_node(
        label="Person", merge_keys={"name": "Eve"}, properties={"role": "spy"}, **LLM
    )
    assert isinstance(held, ProposedResult), held
    decided = gate.reviews.decide(held.proposal, "approve", REVIEWER, "checked")
    assert isinstance(decided, ReviewDecision), decided
    return decided


def test_a_decision_is_listed_under_its_reviewer(gate: Gate, db_path: Path) -> None:
    decided = approved(gate)
    gate.close()
    by_reviewer = as_json(db_path, "log", "--agent", "rev-1", "--format", "json")["events"]
    assert [(e["seq"], e["type"]) for e in by_reviewer] == [(decided.seq, "proposal.decided")]
    by_writer = as_json(db_path, "log", "--agent", "writer-1", "--format", "json")["events"]
    assert [e["type"] for e in by_writer] == ["schema.published", "write.proposed", "node.written"]

    audited = as_json(db_path, "audit", "agent", "rev-1", "--format", "json")
    assert [(d["seq"], d["proposal"], d["decision"], d["writer"]) for d in audited["decisions"]] == [
        (decided.seq, decided.proposal, "approved", "writer-1")
    ]  # fmt: skip
    assert audited["written"] == 0  # the reviewer wrote nothing: the value is the writer's
    assert as_json(db_path, "audit", "agent", "writer-1", "--format", "json")["written"] == 1


def test_an_approved_value_stays_its_writers(gate: Gate) -> None:
    approved(gate)
    conn = gate.log.connection()
    eve = gate.state.node(conn, EVE)
    assert eve is not None
    assert eve.updated_by == "writer-1"
    assert eve.provenance is not None
    assert eve.provenance.source == "chat"
    assert gate.state.approved_writes(conn, "writer-1") == 1  # what review rules count
    assert gate.state.approved_writes(conn, "rev-1") == 0
    assert gate.verify().ok  # the read model equals a replay of the log


def test_an_older_approval_under_the_writers_name_reads_the_same(gate: Gate) -> None:
    """Before decisions were the reviewer's, an approval was appended as the writer's and
    named no writer: it still counts for the writer, and audit agent finds its reviewer."""
    held = gate.write_node(
        label="Person", merge_keys={"name": "Eve"}, properties={"role": "spy"}, **LLM
    )
    assert isinstance(held, ProposedResult), held
    older = ProposalDecided(proposal=held.proposal, decision="approved", reviewer="rev-1")
    record = draft(older, [older.stream], expected={older.stream: 1})
    gate.log.append(WRITER, lambda tx: tx.emit(record))
    conn = gate.log.connection()
    assert gate.state.approved_writes(conn, "writer-1") == 1
    [decision] = Auditor(gate.log).summary("agent", "rev-1").decisions
    assert (decision.proposal, decision.writer) == (held.proposal, "writer-1")
    assert gate.verify().ok
