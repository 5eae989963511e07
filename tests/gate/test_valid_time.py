"""Valid time beside record time (issue 12, acceptance 2), under a frozen clock: what was
true at a moment, as the log knew it at another."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from freezegun import freeze_time

from tests.conftest import ROOT
from tests.server.harness import WRITEGATE
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.models import ProposedResult
from writegate.gate.timeline import node_valid_at
from writegate.language import NodeWritten, payload_of

ADA = 'Person{"name":"Ada"}'
T0, T1, T2, T3, T4, T5, T6 = (datetime(2025, month, 1, tzinfo=UTC) for month in range(1, 8))
BEFORE = datetime(2024, 1, 1, tzinfo=UTC)  # the log's times never run backwards: start early


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Both backends."""
    return any_db


@pytest.fixture
def history(db_path: str | Path) -> Iterator[Gate]:
    """Ada is an engineer from T1 (written then), a director from T2 (written then); at T4
    the log learns she had been an intern from T0 to T1; at T5 she is deleted."""
    with Gate.open(db_path, default_actor=Actor(agent="hr")) as gate:
        with freeze_time(BEFORE):
            gate.publish_schema(ROOT / "fixtures" / "conflict_schema.yaml")
        with freeze_time(T1):
            assert isinstance(ada(gate, role="engineer"), WriteNodeResult)
        with freeze_time(T2):
            assert isinstance(ada(gate, role="director"), WriteNodeResult)
        with freeze_time(T4):
            late = ada(gate, role="intern", valid_from=T0, valid_to=T1)
            assert isinstance(late, WriteNodeResult)
        yield gate


def ada(
    gate: Gate,
    *,
    role: str,
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
) -> WriteNodeResult | ProposedResult | Rejected:
    return gate.write_node(
        label="Person",
        merge_keys={"name": "Ada"},
        properties={"role": role},
        valid_from=valid_from,
        valid_to=valid_to,
        source="hr.csv",
        extraction_method="parsed",
        reliability=0.9,
    )


def role(gate: Gate, *, valid_at: datetime, as_of: datetime | None = None) -> object:
    """Ada's role at ``valid_at`` as known at ``as_of`` (else the node's state)."""
    node = node_valid_at(gate.log, ADA, valid_at=valid_at, as_of=as_of or datetime.now(UTC))
    return node.properties.get("role") if node.state == "present" else node.state


def between(a: datetime, b: datetime) -> datetime:
    return a + (b - a) / 2


def test_a_superseded_fact_answers_for_its_own_time(history: Gate) -> None:
    assert role(history, valid_at=between(T1, T2)) == "engineer"
    assert role(history, valid_at=between(T2, T3)) == "director"
    assert role(history, valid_at=T6) == "director"


def test_a_fact_recorded_late_is_known_from_its_record_time_only(history: Gate) -> None:
    at = between(T0, T1)
    assert role(history, valid_at=at, as_of=T3) == "absent"  # the log did not know yet
    assert role(history, valid_at=at) == "intern"  # as best known now
    # its stated end: from T1 the engineer fact holds again
    assert role(history, valid_at=between(T1, T2)) == "engineer"
    # the event keeps the valid time as stated; its record time is when it was written
    late = history.log.read().events[-1]
    written = payload_of(late)
    assert isinstance(written, NodeWritten)
    assert (written.valid_from, written.valid_to) == (
        "2025-01-01T00:00:00.000000Z",
        "2025-02-01T00:00:00.000000Z",
    )
    assert late.occurred_at == T4


def test_a_deletion_ends_the_node_but_not_its_history(history: Gate) -> None:
    with freeze_time(T5):
        deleted = history.delete_node(
            label="Person", merge_keys={"name": "Ada"}, source="hr.csv", extraction_method="parsed"
        )
    assert not isinstance(deleted, Rejected)
    assert role(history, valid_at=T6) == "deleted"
    assert role(history, valid_at=between(T2, T3)) == "director"
    assert role(history, valid_at=between(T2, T3), as_of=T6) == "director"


def test_a_valid_time_that_ends_before_it_starts_is_refused(history: Gate) -> None:
    head = history.log.head()
    out = ada(history, role="cto", valid_from=T3, valid_to=T2)
    assert isinstance(out, Rejected)
    assert out.error_code == "INVALID_ARGUMENT"
    assert "valid_to" in out.message
    assert history.log.head() == head


def test_show_node_answers_valid_at_and_as_of(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db, default_actor=Actor(agent="hr")) as gate:
        with freeze_time(BEFORE):
            gate.publish_schema(ROOT / "fixtures" / "conflict_schema.yaml")
        with freeze_time(T1):
            ada(gate, role="engineer")
        with freeze_time(T2):
            ada(gate, role="director")

    def show(*args: str) -> dict[str, object]:
        out = subprocess.run(
            [WRITEGATE, "--db", str(db), "show", "node", "Person", "name=Ada", *args,
             "--format", "json"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        shown: dict[str, object] = json.loads(out.stdout)
        return shown

    earlier = show("--valid-at", between(T1, T2).isoformat())
    assert earlier["properties"] == {"name": "Ada", "role": "engineer"}
    assert earlier["valid_at"] == "2025-02-15T00:00:00.000000Z"
    assert show("--valid-at", T3.isoformat())["properties"] == {"name": "Ada", "role": "director"}
    assert show("--as-of", between(T1, T2).isoformat())["properties"] == {
        "name": "Ada",
        "role": "engineer",
    }
