"""The projector contract, run against every projector."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.projections.contract import ProjectorContract
from writegate.projections.contract import Projector
from writegate.projections.graph import BoltTarget, GraphProjector
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.prov import ProvProjector
from writegate.projections.statestore import StateStore


def _tmp(request: pytest.FixtureRequest) -> Path:
    path: Path = request.getfixturevalue("tmp_path")
    return path


class TestStateStore(ProjectorContract):
    def make(self, request: pytest.FixtureRequest) -> Projector:
        return StateStore(_tmp(request) / "state.db")

    def reopen(self, projector: Projector, request: pytest.FixtureRequest) -> Projector:
        projector.close()
        return StateStore(_tmp(request) / "state.db")


class TestJsonl(ProjectorContract):
    @pytest.fixture(params=["memorymesh", "mcp-memory"], autouse=True)
    def fmt(self, request: pytest.FixtureRequest) -> str:
        return str(request.param)

    def make(self, request: pytest.FixtureRequest) -> Projector:
        return JsonlProjector(
            _tmp(request) / "graph.jsonl",
            request.getfixturevalue("history_gate").log,
            fmt=request.getfixturevalue("fmt"),
        )

    def reopen(self, projector: Projector, request: pytest.FixtureRequest) -> Projector:
        projector.close()
        return self.make(request)


class TestProv(ProjectorContract):
    def make(self, request: pytest.FixtureRequest) -> Projector:
        return ProvProjector(_tmp(request) / "prov.nt")

    def reopen(self, projector: Projector, request: pytest.FixtureRequest) -> Projector:
        projector.close()
        return self.make(request)


class TestGraph(ProjectorContract):
    @pytest.fixture(autouse=True)
    def server(self, bolt: BoltTarget) -> BoltTarget:
        return bolt

    def make(self, request: pytest.FixtureRequest) -> Projector:
        target: BoltTarget = request.getfixturevalue("server")
        return GraphProjector(target)

    def reopen(self, projector: Projector, request: pytest.FixtureRequest) -> Projector:
        projector.close()
        return GraphProjector(request.getfixturevalue("server"))
