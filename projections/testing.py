"""The projector contract as a reusable test case, shipped with the package (as the
``eventsourcing`` library ships its recorder tests), and the history it replays.

A projector's test subclasses ``ProjectorContractTestCase`` and says how to make a fresh
store and how to reopen it (as after a restart). The history, written through the real
gate, takes every path a projector has: remaps, stubs, updates, property removal,
batches, cascades and deletions. Plain ``unittest``: nothing else is needed to run it.
"""

from __future__ import annotations

import tempfile
import time
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from writegate.eventlog import Actor, EventCore
from writegate.gate import Gate
from writegate.projections import runner
from writegate.projections.contract import ProjectionGap, Projector

ADA = Actor(agent="ada-bot", session="s-ada", transport="mcp")
BOB = Actor(agent="bob-bot", session="s-bob", transport="http")
SCHEMA: dict[str, Any] = {  # seed 000's matrix schema: the history's remaps and fallbacks
    "name": "contract-history",
    "unknown_label_policy": "remap",
    "fallback_label": "Entity",
    "case_insensitive_remap": False,
    "nodes": {
        "Person": {
            "merge_keys": ["name"],
            "required": ["name"],
            "remaps_from": ["person"],
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        },
        "Organization": {"merge_keys": ["name"], "required": ["name"]},
        "Entity": {"merge_keys": ["name"], "required": ["name"]},
    },
    "relationships": {
        "WORKS_FOR": {"from": ["Person"], "to": ["Organization"]},
        "KNOWS": {"from": ["Person"], "to": ["Person"]},
    },
}


def prov(
    source: str = "https://example.org/team", method: str = "parsed", rel: float = 0.9
) -> dict[str, Any]:
    return {"source": source, "extraction_method": method, "reliability": rel}


def write_history(gate: Gate, step: Callable[[], None]) -> None:
    """Eleven steps of writes; ``step`` runs after each (tests move a frozen clock there)."""
    gate.write_node(
        actor=ADA,
        label="Person",
        merge_keys={"name": "Alice"},
        properties={"age": 30, "skills": ["go", "sql"]},
        **prov(),
    )
    step()
    gate.write_node(
        actor=BOB,
        label=":person",
        merge_keys={"name": "Bob"},
        properties={"age": 41},
        **prov("chat-2032-01-01", "llm", 0.6),
    )
    step()
    gate.write_node(
        actor=ADA,
        label="Organization",
        merge_keys={"name": "Initech"},
        properties={"kind": "company"},
        **prov(),
    )
    step()
    gate.write_relationship(
        actor=ADA,
        type="WORKS_FOR",
        from_label="Person",
        from_keys={"name": "Alice"},
        to_label="Organization",
        to_keys={"name": "Initech"},
        properties={"since": 2029},
        **prov(),
    )
    step()
    gate.write_relationship(
        actor=BOB,
        type="KNOWS",
        from_label="Person",
        from_keys={"name": "Bob"},
        to_label="Person",
        to_keys={"name": "Carol"},
        endpoint_policy="merge_endpoints",
        **prov("chat-2032-01-01", "llm", 0.6),
    )
    step()
    gate.write_node(
        actor=ADA,
        label="Person",
        merge_keys={"name": "Alice"},
        properties={"age": 31, "skills": None},
        **prov("hr.csv", "api", 1.0),
    )
    step()
    gate.write_node(
        actor=BOB,
        label="Gizmo",
        merge_keys={"name": "Widget"},
        properties={},
        **prov("chat-2032-01-01", "llm", 0.6),
    )
    step()
    gate.write_node(
        actor=ADA,
        label="Person",
        merge_keys={"name": "Carol"},
        properties={"age": 25},
        **prov(),
    )  # resolves the stub
    step()
    gate.write_batch(
        actor=ADA,
        items=[
            {"op": "write_node", "label": "Person", "merge_keys": {"name": "Dan"}, **prov()},
            {
                "op": "write_relationship",
                "type": "KNOWS",
                "from_label": "Person",
                "from_keys": {"name": "Dan"},
                "to_label": "Person",
                "to_keys": {"name": "Alice"},
                **prov(),
            },
        ],
    )
    step()
    gate.delete_relationship(
        actor=BOB,
        type="KNOWS",
        from_label="Person",
        from_keys={"name": "Bob"},
        to_label="Person",
        to_keys={"name": "Carol"},
        **prov("cleanup", "manual", 1.0),
    )
    step()
    gate.delete_node(
        actor=ADA,
        label="Person",
        merge_keys={"name": "Dan"},
        detach=True,
        **prov("cleanup", "manual", 1.0),
    )
    step()


class ProjectorContractTestCase(unittest.TestCase):
    """Every promise of ``writegate.projections.contract.Projector``, checked on a real store."""

    __test__: ClassVar[bool] = False  # the subclasses that fill ``create`` are the tests

    def create(self) -> Projector:
        """A fresh, empty store (under ``self.scratch``)."""
        raise NotImplementedError

    def reopen(self, projector: Projector) -> Projector:
        """The same store opened again, as after a restart (close ``projector`` first)."""
        projector.close()
        return self.create()

    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.scratch = Path(directory.name)
        self.gate = Gate.open(self.scratch / "history.db")
        self.addCleanup(self.gate.close)
        self.gate.publish_schema(SCHEMA)
        self.steps: list[int] = []  # the head after each step
        write_history(self.gate, self._step)
        self.events: list[EventCore] = list(self.gate.log.iter_replayed())
        self.projector = self.create()
        self.addCleanup(self._close)

    def _close(self) -> None:
        self.projector.close()  # the store open now (a restart test reopens it)

    def _step(self) -> None:
        self.steps.append(self.gate.log.head()[0])
        time.sleep(0.002)  # each step at its own time, for --as-of

    def test_apply_moves_the_checkpoint_to_the_last_event(self) -> None:
        assert self.projector.checkpoint() == 0
        assert self.projector.apply(self.events) == self.events[-1].seq
        assert self.projector.checkpoint() == self.events[-1].seq

    def test_reapplying_events_changes_nothing(self) -> None:
        events, projector = self.events, self.projector
        projector.apply(events)
        once = projector.snapshot()
        projector.apply(events)
        assert projector.snapshot() == once
        projector.apply(events[len(events) // 2 :])
        assert projector.snapshot() == once
        assert projector.checkpoint() == events[-1].seq

    def test_batch_size_does_not_matter(self) -> None:
        events, projector = self.events, self.projector
        projector.apply(events)
        whole = projector.snapshot()
        for size in (1, 3, 7):
            projector.reset()
            for start in range(0, len(events), size):
                projector.apply(events[start : start + size])
            assert projector.snapshot() == whole, f"batches of {size}"

    def test_a_gap_is_refused_and_changes_nothing(self) -> None:
        events, projector = self.events, self.projector
        projector.apply(events[:3])
        before = projector.snapshot()
        with self.assertRaises(ProjectionGap):
            projector.apply(events[5:])
        assert projector.checkpoint() == events[2].seq
        assert projector.snapshot() == before

    def test_reset_empties_the_store(self) -> None:
        empty = self.projector.snapshot()
        self.projector.apply(self.events)
        assert self.projector.snapshot() != empty
        self.projector.reset()
        assert self.projector.checkpoint() == 0
        assert self.projector.snapshot() == empty

    def test_the_store_survives_a_restart(self) -> None:
        events = self.events
        self.projector.apply(events[:6])
        before = self.projector.snapshot()
        self.projector = self.reopen(self.projector)
        assert self.projector.checkpoint() == events[5].seq
        assert self.projector.snapshot() == before
        self.projector.apply(events[4:])  # overlapping: at-least-once delivery
        self.projector.apply(events)
        assert self.projector.checkpoint() == events[-1].seq

    def test_a_rebuild_equals_one_apply_of_every_event(self) -> None:
        """Whatever batches the runner cuts (staged stores get small ones)."""
        self.projector.apply(self.events)
        whole = self.projector.snapshot()
        staged, runner.STAGED_BATCH = runner.STAGED_BATCH, 3
        try:
            result = runner.rebuild(self.gate.log, self.projector, batch=5000)
        finally:
            runner.STAGED_BATCH = staged
        assert result.applied == len(self.events)
        assert self.projector.checkpoint() == self.events[-1].seq
        assert self.projector.snapshot() == whole

    def test_as_of_replays_the_store_as_it_was(self) -> None:
        log, events = self.gate.log, self.events
        cut = self.steps[4]  # the head after the fifth step
        moment = next(e for e in events if e.seq == cut).occurred_at
        assert log.last_seq_at(moment) == cut
        self.projector.apply([e for e in events if e.seq <= cut])
        expected = self.projector.snapshot()
        runner.rebuild(log, self.projector)
        assert self.projector.checkpoint() == events[-1].seq
        result = runner.replay(log, self.projector, as_of=moment)
        assert result.reset  # the store went back in time
        assert self.projector.checkpoint() == cut
        assert self.projector.snapshot() == expected
