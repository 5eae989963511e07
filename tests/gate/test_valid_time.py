"""Valid time beside record time (issue 12, acceptance 2), under a frozen clock: what was
true at a moment, as the log knew it at another."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from tests.conftest import ROOT
from tests.console import run as writegate_run
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.models import ProposedResult
from writegate.gate.reads.past import node_then
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
    node = node_then(gate.log, ADA, valid_at=valid_at, as_of=as_of or datetime.now(UTC))
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

    def show(*args: str) -> dict[str, Any]:
        return show_json(db, "node", "Person", "name=Ada", *args)

    earlier = show("--valid-at", between(T1, T2).isoformat())
    assert earlier["properties"] == {"name": "Ada", "role": "engineer"}
    assert earlier["valid_at"] == "2025-02-15T00:00:00.000000Z"
    assert show("--valid-at", T3.isoformat())["properties"] == {"name": "Ada", "role": "director"}
    assert show("--as-of", between(T1, T2).isoformat())["properties"] == {
        "name": "Ada",
        "role": "engineer",
    }


def show_json(db: Path, *args: str) -> dict[str, Any]:
    """``writegate show ARGS --format json``, parsed."""
    out = writegate_run(["--db", str(db), "show", *args, "--format", "json"])
    assert out.returncode == 0, out.stderr
    shown: dict[str, Any] = json.loads(out.stdout)
    return shown


# -- a replacement closes the valid time of what it replaced (as known now) ---------------


@pytest.fixture
def fresh(db_path: str | Path) -> Iterator[Gate]:
    with Gate.open(db_path, default_actor=Actor(agent="hr")) as gate:
        with freeze_time(BEFORE):
            gate.publish_schema(ROOT / "fixtures" / "conflict_schema.yaml")
        yield gate


def test_a_backdated_replacement_holds_from_its_stated_start(fresh: Gate) -> None:
    """Engineer written at T2; at T4 the log learns she has been a director since T1: as
    known now, the director holds from T1 on (now included, as the current state says),
    and the engineer fact never held; as known at T3, the engineer did."""
    with freeze_time(T2):
        ada(fresh, role="engineer")
    with freeze_time(T4):
        replaced = ada(fresh, role="director", valid_from=T1)
    assert isinstance(replaced, WriteNodeResult)
    assert replaced.superseded
    assert replaced.superseded[0].value == "engineer"
    held = fresh.state.node(fresh.log.connection(), ADA)
    assert held is not None
    assert held.properties["role"] == "director"  # the current state
    assert role(fresh, valid_at=T6) == "director"
    assert role(fresh, valid_at=between(T2, T3)) == "director"
    assert role(fresh, valid_at=between(T1, T2)) == "director"
    assert role(fresh, valid_at=between(T0, T1)) == "absent"
    assert role(fresh, valid_at=between(T2, T3), as_of=T3) == "engineer"


def test_a_forward_dated_replacement_holds_from_then_on(fresh: Gate) -> None:
    """At T2 the log learns she will be a director from T4: the engineer holds until T4."""
    with freeze_time(T1):
        ada(fresh, role="engineer")
    with freeze_time(T2):
        ada(fresh, role="director", valid_from=T4)
    assert role(fresh, valid_at=between(T2, T3)) == "engineer"
    assert role(fresh, valid_at=T5) == "director"


def test_a_replacement_stating_no_time_closes_the_old_fact_when_recorded(fresh: Gate) -> None:
    """An engineer from T5 (written at T1, forward-dated), replaced at T2 by a director
    stating no valid time: the director holds from T2, at T6 too; the engineer fact was
    closed at T2, before it would have started, so it never holds."""
    with freeze_time(T1):
        ada(fresh, role="engineer", valid_from=T5)
    with freeze_time(T2):
        ada(fresh, role="director")
    assert role(fresh, valid_at=T6) == "director"
    assert role(fresh, valid_at=between(T2, T3)) == "director"
    assert role(fresh, valid_at=between(T1, T2)) == "absent"
    assert role(fresh, valid_at=T6, as_of=between(T1, T2)) == "engineer"


def test_show_node_answers_a_backdated_replacement(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db, default_actor=Actor(agent="hr")) as gate:
        with freeze_time(BEFORE):
            gate.publish_schema(ROOT / "fixtures" / "conflict_schema.yaml")
        with freeze_time(T2):
            ada(gate, role="engineer")
        with freeze_time(T4):
            ada(gate, role="director", valid_from=T1)
    now = show_json(db, "node", "Person", "name=Ada", "--valid-at", T6.isoformat())
    assert now["properties"]["role"] == "director"
    assert now["last_seq"] == 3  # the write that says so
    known_then = show_json(
        db, "node", "Person", "name=Ada", "--valid-at", T6.isoformat(), "--as-of", T3.isoformat()
    )
    assert known_then["properties"]["role"] == "engineer"


def test_show_node_answers_forward_dated_and_late_recorded_facts(tmp_path: Path) -> None:
    """Engineer from T1; at T2 a director from T4 (forward-dated); at T5 an intern from T0
    to T1 (recorded late, bounded)."""
    db = tmp_path / "log.db"
    with Gate.open(db, default_actor=Actor(agent="hr")) as gate:
        with freeze_time(BEFORE):
            gate.publish_schema(ROOT / "fixtures" / "conflict_schema.yaml")
        with freeze_time(T1):
            ada(gate, role="engineer")
        with freeze_time(T2):
            ada(gate, role="director", valid_from=T4)
        with freeze_time(T5):
            ada(gate, role="intern", valid_from=T0, valid_to=T1)

    def role_at(valid_at: datetime, *as_of: str) -> object:
        shown = show_json(
            db, "node", "Person", "name=Ada", "--valid-at", valid_at.isoformat(), *as_of
        )
        return shown["properties"].get("role", shown["state"])

    assert role_at(between(T2, T3)) == "engineer"  # the director starts at T4
    assert role_at(T6) == "director"
    assert role_at(between(T0, T1)) == "intern"
    assert role_at(between(T0, T1), "--as-of", T4.isoformat()) == "absent"  # not known yet


# -- relationships: a functional one replaced ends where its successor starts -------------

INITECH = '(Person{"name":"Ada"})-[WORKS_FOR]->(Organization{"name":"Initech"})'
GLOBEX = '(Person{"name":"Ada"})-[WORKS_FOR]->(Organization{"name":"Globex"})'


def works_for(gate: Gate, organization: str, valid_from: datetime | None = None) -> None:
    written = gate.write_relationship(
        type="WORKS_FOR",
        from_label="Person",
        from_keys={"name": "Ada"},
        to_label="Organization",
        to_keys={"name": organization},
        endpoint_policy="merge_endpoints",
        valid_from=valid_from,
        source="hr.csv",
        extraction_method="parsed",
        reliability=0.9,
    )
    assert written.status == "written", written


@pytest.fixture
def employers(tmp_path: Path) -> Path:
    """Ada works for Initech from T1 (written then); at T3 the log learns she has worked for
    Globex since T2 (WORKS_FOR is functional: Initech ends)."""
    db = tmp_path / "log.db"
    with Gate.open(db, default_actor=Actor(agent="hr")) as gate:
        with freeze_time(BEFORE):
            gate.publish_schema(ROOT / "fixtures" / "conflict_schema.yaml")
        with freeze_time(T1):
            ada(gate, role="engineer")
            works_for(gate, "Initech")
        with freeze_time(T3):
            works_for(gate, "Globex", valid_from=T2)
    return db


def test_a_replaced_relationship_answers_for_its_own_valid_time(employers: Path) -> None:
    ends = ["--from", "Person", "-f", "name=Ada", "--to", "Organization", "-t", "name=Initech"]

    def edge(valid_at: datetime) -> dict[str, Any]:
        return show_json(
            employers, "relationship", "WORKS_FOR", *ends, "--valid-at", valid_at.isoformat()
        )

    earlier = edge(between(T1, T2))
    assert earlier["state"] == "present"
    assert (earlier["valid_from"], earlier["valid_to"]) == (
        "2025-02-01T00:00:00.000000Z",
        "2025-03-01T00:00:00.000000Z",  # where Globex starts, as known now
    )
    assert earlier["superseded_by"] == GLOBEX
    later = edge(between(T2, T3))
    assert later["state"] == "deleted"


def test_show_node_lists_the_relationships_of_its_time(employers: Path) -> None:
    def related(*args: str) -> list[str]:
        shown = show_json(employers, "node", "Person", "name=Ada", *args)
        return [r["identity"] for r in shown["relationships"]]

    assert related() == [GLOBEX]
    assert related("--as-of", between(T1, T3).isoformat()) == [INITECH]  # record time
    assert related("--valid-at", between(T1, T2).isoformat()) == [INITECH]  # valid time
    assert related("--valid-at", between(T2, T3).isoformat()) == [GLOBEX]
    assert related("--valid-at", between(T2, T3).isoformat(), "--as-of", T2.isoformat()) == [
        INITECH
    ]
