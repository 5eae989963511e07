"""The test cases an embedder and the vector follower pass, shipped with the package like
the log's and the projectors' (``eventlog.testing``, ``projections.testing``).

``EmbedderContractTestCase``: a subclass says how to make the embedder; the case checks
what ``contract.Embedder`` promises (shape, float32, unit rows, zero rows for no words,
the same row alone or in any batch). ``VectorsContractTestCase``: a subclass makes a log
of its backend with the state read model inline and an embedder; the case copies a
recorded history into the log and checks that the follower embeds exactly the text
index's documents, that a reader in another connection follows it batch by batch, and
that a store made by another embedder is refused. Plain ``unittest``.
"""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path
from typing import ClassVar

import numpy as np

from writegate.eventlog import EventCore, Log
from writegate.projections import runner
from writegate.projections.contract import ProjectionError
from writegate.projections.search import text_index_for
from writegate.projections.testing import HISTORY, history
from writegate.projections.vectors.contract import Embedder
from writegate.projections.vectors.projector import VectorProjector

TEXTS = [
    "Grace Hopper worked for the Navy",
    "Ada Lovelace wrote the first program",
    "",  # says nothing
    "!!! ???",  # a model may know these tokens, or not
    "Grace Hopper worked for the Navy",  # the same text again
    "a compiler translates programs written by people into machine code " * 40,
]


class EmbedderContractTestCase(unittest.TestCase):
    """Every promise of ``writegate.projections.vectors.contract.Embedder``."""

    __test__: ClassVar[bool] = False  # the subclasses that fill ``create_embedder`` are tests

    def create_embedder(self) -> Embedder:
        raise NotImplementedError

    def setUp(self) -> None:
        self.embedder = self.create_embedder()

    def test_each_text_is_one_unit_float32_row(self) -> None:
        rows = self.embedder.embed(TEXTS)
        assert rows.shape == (len(TEXTS), self.embedder.dimensions)
        assert rows.dtype == np.float32
        lengths = np.linalg.norm(rows, axis=1)
        for text, length in zip(TEXTS, lengths, strict=True):
            # words make a unit row; the empty text a zero row (punctuation: either)
            if not text:
                assert length == 0.0
            elif any(c.isalnum() for c in text):
                assert abs(length - 1.0) < 1e-5, (text[:30], length)
            else:
                assert length == 0.0 or abs(length - 1.0) < 1e-5, (text, length)

    def test_a_text_gives_the_same_row_alone_or_in_any_batch(self) -> None:
        together = self.embedder.embed(TEXTS)
        for i, text in enumerate(TEXTS):
            alone = self.embedder.embed([text])
            np.testing.assert_allclose(alone[0], together[i], atol=1e-6)
        np.testing.assert_allclose(together[0], together[4], atol=1e-6)

    def test_no_texts_give_no_rows(self) -> None:
        assert self.embedder.embed([]).shape == (0, self.embedder.dimensions)

    def test_a_text_is_nearest_to_itself(self) -> None:
        rows = self.embedder.embed(TEXTS[:2])
        similarity = rows @ rows.T
        assert similarity[0, 0] > similarity[0, 1]
        assert similarity[1, 1] > similarity[1, 0]

    def test_the_name_says_who_made_the_vectors(self) -> None:
        assert self.embedder.name
        assert self.embedder.name == self.create_embedder().name


class VectorsContractTestCase(unittest.TestCase):
    """The vector follower on a real log, against the text index it follows."""

    __test__: ClassVar[bool] = False
    history_file: ClassVar[Path] = HISTORY

    def create_log(self) -> Log:
        """A new, empty log of the backend under test, with ``StateProjection`` inline."""
        raise NotImplementedError

    def create_embedder(self) -> Embedder:
        raise NotImplementedError

    def other_embedder(self) -> Embedder:
        """An embedder of another name (its vectors must not mix with the first's)."""
        raise NotImplementedError

    def setUp(self) -> None:
        self._scratch = tempfile.TemporaryDirectory()
        self.addCleanup(self._scratch.cleanup)
        self.log = self.create_log()
        self.addCleanup(self.log.close)
        self.log.append_existing(history(self.history_file))
        self.events: list[EventCore] = list(self.log.iter_replayed())
        self.follower = self.open()

    @property
    def scratch(self) -> Path:
        return Path(self._scratch.name)

    def open(self, embedder: Embedder | None = None) -> VectorProjector:
        """The store (opened again: another connection, as another process would)."""
        projector = VectorProjector(
            self.log, embedder or self.create_embedder(), path=self.scratch / "vectors.db"
        )
        self.addCleanup(projector.close)
        return projector

    def documents(self) -> dict[str, tuple[str, str]]:
        conn = self.log.connection()
        return {d.identity: (d.kind, d.text) for d in text_index_for(conn).documents(conn)}

    def test_the_follower_embeds_every_document_of_the_index(self) -> None:
        result = runner.replay(self.log, self.follower, batch=4)
        assert result.checkpoint == self.log.head()[0]
        documents = self.documents()
        stored = {identity: (kind, vector) for identity, kind, vector in self.follower.snapshot()}
        assert set(stored) == set(documents)
        embedder = self.create_embedder()
        for identity, (kind, text) in documents.items():
            assert stored[identity][0] == kind
            expected = embedder.embed([text])[0]
            np.testing.assert_allclose(
                np.frombuffer(stored[identity][1], dtype=np.float32), expected, atol=1e-6
            )

    def test_a_document_is_nearest_to_its_own_text(self) -> None:
        runner.replay(self.log, self.follower)
        for identity, (kind, text) in self.documents().items():
            found = self.follower.nearest(text, 50, kind)
            best = found[0].similarity
            assert identity in [f.identity for f in found if f.similarity >= best - 1e-5]
            assert all(f.similarity <= best for f in found)

    def test_a_reader_follows_the_follower_batch_by_batch(self) -> None:
        reader = self.open()
        reader.warm()  # an empty store read: the batches below are read as they come
        documents = self.documents()
        some = next(iter(documents.values()))
        for start in range(0, len(self.events), 5):
            self.follower.apply(self.events[start : start + 5])
            fresh = self.open()  # reads the store whole
            for kind in ("node", "relationship"):
                assert reader.nearest(some[1], 100, kind) == fresh.nearest(some[1], 100, kind)
        runner.rebuild(self.log, self.follower)  # a reset: the reader reads all again
        assert reader.nearest(some[1], 100, some[0]) == self.open().nearest(some[1], 100, some[0])

    def test_nearest_is_bounded_and_ordered(self) -> None:
        runner.replay(self.log, self.follower)
        found = self.follower.nearest("Grace Hopper", 2, "node")
        assert len(found) <= 2
        assert found == sorted(found, key=lambda f: (-f.similarity, f.identity))
        assert self.follower.nearest("Grace Hopper", 0, "node") == []
        assert self.follower.nearest("Grace Hopper", 5, "no such kind") == []
        assert self.follower.nearest("", 5, "node") == []  # no words: similar to nothing

    def test_vectors_of_another_embedder_are_refused_until_a_rebuild(self) -> None:
        runner.replay(self.log, self.follower)
        other = self.open(self.other_embedder())
        assert other.damage() is not None
        with self.assertRaises(ProjectionError):
            runner.replay(self.log, other)
        some = next(iter(self.documents().values()))
        assert other.nearest(some[1], 5, some[0]) == []  # not a comparison of two models
        runner.rebuild(self.log, other)
        assert other.damage() is None
        assert other.nearest(some[1], 5, some[0]) != []
        assert self.open().damage() is not None
