"""A refusal met by another process's write lock: the answer comes at once, and the refusal
is recorded for auditors once the lock frees (``audit conflicts`` and ``report`` count
them); one still waiting when the gate closes is named in one warning line.

The lock is held by a real second process, as a stdio server or ``writegate write`` sharing
the file would hold it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.conftest import AGENT, SEED_SCHEMA, person
from tests.server.test_busy_log import write_lock_held
from writegate.gate import Gate, Rejected

BUSY = 30.0  # seconds a write would wait: longer than any answer here may take


def refuse(gate: Gate, name: str) -> None:
    refused = gate.write_node(**person(name, label="Starship"))
    assert isinstance(refused, Rejected), refused
    assert refused.error_code == "SCHEMA_UNKNOWN_LABEL"


def test_a_refusal_is_answered_while_the_lock_is_held_and_recorded_once_it_frees(
    db_path: Path,
) -> None:
    with Gate.open(
        db_path, default_actor=AGENT, busy_timeout=BUSY, unknown_label_policy="reject"
    ) as gate:
        gate.publish_schema(SEED_SCHEMA)
        refuse(gate, "Defiant")  # recorded at once: the lock is free
        with write_lock_held(db_path):
            refuse(gate, "Enterprise")
            refuse(gate, "Voyager")
            assert gate.rejections.count() == 1  # the others wait for the lock
        refuse(gate, "Reliant")  # after those that wait, in the order they were refused
        assert gate.rejections.drained(timeout=60)
        rows = list(gate.rejections.read())
    assert [json.loads(r.request)["merge_keys"]["name"] for r in rows] == [
        "Defiant",
        "Enterprise",
        "Voyager",
        "Reliant",
    ]
    assert [r.agent for r in rows] == [AGENT.agent] * 4
    assert rows[1].at <= rows[2].at <= rows[3].at  # when refused, not when recorded


def test_a_refusal_still_waiting_when_the_gate_closes_is_named_in_one_warning(
    db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gate = Gate.open(db_path, default_actor=AGENT, busy_timeout=BUSY, unknown_label_policy="reject")
    gate.publish_schema(SEED_SCHEMA)
    with write_lock_held(db_path), caplog.at_level(logging.WARNING):
        refuse(gate, "Enterprise")
        gate.close()  # at once: it does not wait for the lock
    [line] = [r.getMessage() for r in caplog.records]
    assert line.startswith(
        f"{db_path}: 1 refusal not recorded in the rejections table (another process held "
        f"the write lock until this one stopped): write_node by {AGENT.agent} "
        "(SCHEMA_UNKNOWN_LABEL) at "
    ), line
    with Gate.open(db_path, default_actor=AGENT) as reopened:
        assert reopened.rejections.count() == 0
