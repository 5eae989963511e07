"""A held write needs a second pair of eyes (issue 41, defect 3): the agent that wrote a
proposal may not approve or reject it (``SELF_REVIEW``) — through the API, the CLI, the MCP
tool and the desk — and a decision refused appends nothing; a label or type that says
``self_review: true`` lets its writers decide their own held writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import writegate
from tests.conftest import ROOT
from tests.server.harness import Served
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.models import ProposedResult, Rejected
from writegate.gate.review import ReviewDecision

ALICE, BOB = Actor(agent="alice"), Actor(agent="bob")
GUESS: dict[str, Any] = {"source": "chat", "extraction_method": "llm", "reliability": 0.5}


def review_schema(tmp_path: Path, **person: Any) -> Path:
    """People held below confidence 0.5 (an llm claim from a 0.5 source is 0.3)."""
    document = yaml.safe_load((ROOT / "fixtures" / "conflict_schema.yaml").read_text())
    document["nodes"]["Person"].update(review_below=0.5, **person)
    path = tmp_path / "review_schema.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


@pytest.fixture
def gate(db_path: str | Path, tmp_path: Path) -> Iterator[Gate]:
    with Gate.open(db_path, default_actor=ALICE) as g:
        assert g.publish_schema(review_schema(tmp_path)).status == "published"
        yield g


def _held(gate: Gate, name: str = "Eve") -> str:
    held = gate.write_node(label="Person", merge_keys={"name": name}, properties={}, **GUESS)
    assert isinstance(held, ProposedResult), held
    return held.proposal


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_the_writer_of_a_proposal_may_not_decide_it(gate: Gate, decision: str) -> None:
    proposal = _held(gate)
    before = gate.log.head()
    refused = gate.reviews.decide(proposal, decision, ALICE, "mine")  # type: ignore[arg-type]
    assert isinstance(refused, Rejected), refused
    assert refused.error_code == "SELF_REVIEW"
    assert refused.details == {"proposal": proposal, "agent": "alice"}
    assert gate.log.head() == before
    decided = gate.reviews.decide(proposal, decision, BOB, "checked")  # type: ignore[arg-type]
    assert isinstance(decided, ReviewDecision), decided


def test_a_label_may_let_its_writers_decide_their_own(db_path: str | Path, tmp_path: Path) -> None:
    with Gate.open(db_path, default_actor=ALICE) as gate:
        assert gate.publish_schema(review_schema(tmp_path, self_review=True)).status == "published"
        decided = gate.reviews.decide(_held(gate), "approve", ALICE, "mine, and allowed")
    assert isinstance(decided, ReviewDecision), decided
    assert decided.decision == "approved"


def test_the_cli_refuses_a_reviewer_their_own_held_write(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(review_schema(tmp_path)))
    held = writegate(db, "--as", "alice", "write", "node", "Person:name=Eve", "--source", "chat",
                     "--method", "llm", "--reliability", "0.5", "--format", "json")  # fmt: skip
    proposal = yaml.safe_load(held.stdout)["proposal"]
    refused = writegate(db, "--as", "alice", "review", "approve", proposal, code=1)
    assert refused.stderr.startswith("error: SELF_REVIEW: proposal ")
    assert refused.stderr.count("\n") == 1
    writegate(db, "--as", "bob", "review", "approve", proposal)


@pytest.mark.anyio
async def test_an_admin_over_mcp_may_not_approve_their_own_held_write(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    with Gate.open(db) as gate:
        assert gate.publish_schema(review_schema(tmp_path)).status == "published"
    served = Served("stdio", db)
    try:
        async with served.agent("alice", ("admin",)) as alice:
            arguments = {"label": "Person", "merge_keys": {"name": "Eve"}, **GUESS}
            held = await alice.call("write_node", arguments)
            assert held.data["status"] == "proposed", held.data
            proposal = held.data["proposal"]
            refused = await alice.call(
                "review_decide", {"proposal": proposal, "decision": "approve"}
            )
        assert refused.is_error
        assert refused.data["error_code"] == "SELF_REVIEW"
        async with served.agent("bob", ("reviewer",)) as bob:
            decided = await bob.call("review_decide", {"proposal": proposal, "decision": "approve"})
        assert not decided.is_error, decided.data
    finally:
        served.close()
