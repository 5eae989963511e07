"""The vector follower and its embedders: the contract cases
(``writegate.projections.vectors.testing``) for the test embedder and the shipped two, the
projector contract for the follower, on SQLite and PostgreSQL and both recorded histories."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.postgres import Server
from tests.projections.hashing_embedder import HashingEmbedder, WideHashingEmbedder
from writegate.eventlog import EventLog, Log
from writegate.eventlog.postgres import PostgresEventLog
from writegate.projections.contract import Projector
from writegate.projections.state import StateProjection
from writegate.projections.testing import TRUTH_HISTORY, MarkedContractTestCase
from writegate.projections.vectors.contract import Embedder
from writegate.projections.vectors.minilm import MiniLMEmbedder
from writegate.projections.vectors.projector import VectorProjector
from writegate.projections.vectors.testing import (
    EmbedderContractTestCase,
    VectorsContractTestCase,
)
from writegate.projections.vectors.wordllama import WordLlamaEmbedder

_NAMES = itertools.count(1)


class TestHashingEmbedder(EmbedderContractTestCase):
    __test__ = True

    def create_embedder(self) -> Embedder:
        return HashingEmbedder()


class TestWordLlamaEmbedder(EmbedderContractTestCase):
    __test__ = True

    def create_embedder(self) -> Embedder:
        return WordLlamaEmbedder()


class TestMiniLMEmbedder(EmbedderContractTestCase):
    __test__ = True

    def create_embedder(self) -> Embedder:
        return MiniLMEmbedder()


class TestSqliteVectors(VectorsContractTestCase):
    __test__ = True

    def create_log(self) -> Log:
        return EventLog(self.scratch / "log.db", inline=[StateProjection()])

    def create_embedder(self) -> Embedder:
        return HashingEmbedder()

    def other_embedder(self) -> Embedder:
        return WideHashingEmbedder()


class TestSqliteVectorsTruth(TestSqliteVectors):
    history_file = TRUTH_HISTORY


class TestSqliteVectorsWordLlama(TestSqliteVectors):
    """The shipped model through the whole follower."""

    def create_embedder(self) -> Embedder:
        return WordLlamaEmbedder()


class TestSqliteVectorsMiniLM(TestSqliteVectors):
    """The stronger model through the whole follower."""

    def create_embedder(self) -> Embedder:
        return MiniLMEmbedder()


@pytest.fixture(scope="class")
def _server(request: pytest.FixtureRequest, postgres: Server) -> None:
    request.cls.server = postgres


@pytest.mark.usefixtures("_server")
class TestPostgresVectors(TestSqliteVectors):
    server: Server

    def create_log(self) -> Log:
        dsn = self.server.create_database(f"vectors_{next(_NAMES)}")
        return PostgresEventLog(dsn, inline=[StateProjection()])


class TestPostgresVectorsTruth(TestPostgresVectors):
    history_file = TRUTH_HISTORY


class TestVectorFollowerContract(MarkedContractTestCase):
    __test__ = True

    def create_log(self, path: Path) -> Log:
        return EventLog(path, inline=[StateProjection()])

    def create(self) -> Projector:
        return VectorProjector(self.log, HashingEmbedder(), path=self.scratch / "vectors.db")


class TestVectorFollowerContractTruth(TestVectorFollowerContract):
    history_file = TRUTH_HISTORY


@pytest.mark.usefixtures("_server")
class TestVectorFollowerContractPostgres(TestVectorFollowerContract):
    server: Server

    def create_log(self, path: Path) -> Log:
        dsn = self.server.create_database(f"vectors_{next(_NAMES)}")
        return PostgresEventLog(dsn, inline=[StateProjection()])

    def create(self) -> Projector:
        return VectorProjector(self.log, HashingEmbedder())
