"""The projector contract (``writegate.projections.testing``), run against every projector,
on both recorded histories (the 0.1 one, and the truth over time: ``...Truth`` classes)."""

from __future__ import annotations

import pytest

from tests.projections.conftest import memgraph_target, wipe
from writegate.projections.contract import Projector
from writegate.projections.graph import BoltTarget, GraphProjector
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.prov import ProvProjector
from writegate.projections.statestore import StateStore
from writegate.projections.testing import (
    TRUTH_HISTORY,
    MarkedContractTestCase,
    ProjectorContractTestCase,
)


class TestStateStore(ProjectorContractTestCase):
    __test__ = True

    def create(self) -> Projector:
        return StateStore(self.scratch / "state.db")


class TestMemoryMeshJsonl(MarkedContractTestCase):
    __test__ = True

    def create(self) -> Projector:
        return JsonlProjector(self.scratch / "graph.jsonl", self.log, fmt="memorymesh")


class TestMcpMemoryJsonl(MarkedContractTestCase):
    __test__ = True

    def create(self) -> Projector:
        return JsonlProjector(self.scratch / "graph.jsonl", self.log, fmt="mcp-memory")


class TestProv(MarkedContractTestCase):
    __test__ = True

    def create(self) -> Projector:
        return ProvProjector(self.scratch / "prov.nt", log=self.log)


class TestGraphOnArcadeDB(MarkedContractTestCase):
    """The graph projection on the live Bolt server the harness starts (ArcadeDB)."""

    __test__ = True
    server: BoltTarget

    @pytest.fixture(autouse=True)
    def _server(self, arcadedb: BoltTarget) -> None:
        wipe(arcadedb)
        self.server = arcadedb

    def create(self) -> Projector:
        return GraphProjector(self.server, log=self.log)


class Truth:
    """Replays the recorded history of supersessions, valid time, reviews, resolution and a
    merge undone, instead of the 0.1 one."""

    history_file = TRUTH_HISTORY


class TestStateStoreTruth(Truth, TestStateStore):
    pass


class TestMemoryMeshJsonlTruth(Truth, TestMemoryMeshJsonl):
    pass


class TestMcpMemoryJsonlTruth(Truth, TestMcpMemoryJsonl):
    pass


class TestProvTruth(Truth, TestProv):
    pass


class TestGraphOnArcadeDBTruth(Truth, TestGraphOnArcadeDB):
    pass


if memgraph := memgraph_target():  # a Memgraph this machine was given (MEMGRAPH_URI)

    class TestGraphOnMemgraph(MarkedContractTestCase):
        __test__ = True

        def setUp(self) -> None:
            assert memgraph is not None
            wipe(memgraph)
            super().setUp()

        def create(self) -> Projector:
            assert memgraph is not None
            return GraphProjector(memgraph, log=self.log)
