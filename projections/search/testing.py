"""The text index contract as a reusable test case, shipped with the package like the log's
and the projectors' (``eventlog.testing``, ``projections.testing``).

A backend's test subclasses ``TextIndexContractTestCase`` and says how to make a fresh log
of its database with the state read model inline (which keeps the index). The case copies a
recorded history into it (``projections.testing``: the 0.1 history, or the truth over time
with supersessions, reviews, a merge and its undoing) and checks that the index says what
the state tables say, equals a replay, answers any string by relevance, page by page, and
keeps each search inside the scopes it is given.
Plain ``unittest`` plus hypothesis.
"""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path
from typing import ClassVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from writegate.eventlog import Actor, Log
from writegate.language import ObservationRecorded, WriteProvenance, draft, observation_id
from writegate.projections.search.contract import Document, entity_text
from writegate.projections.state import StateProjection
from writegate.projections.state.searchable import listing, searched
from writegate.projections.testing import HISTORY, history

_PAGE = 500  # more than any recorded history's nodes: one page holds every hit
# a kind whose documents the index keeps itself on every backend, so a test may write them
# (a node's may be its state row: ``TextIndex.follows_rows``)
_KEPT = "observation"
_PROVENANCE = WriteProvenance(
    source="contract",
    extraction_method="manual",
    reliability=1.0,
    confidence=1.0,
    formula="default",
    write_gate_version="contract",
    schema_version="contract",
)


class TextIndexContractTestCase(unittest.TestCase):
    """Every promise of ``writegate.projections.search.contract.TextIndex``, on a real log."""

    __test__: ClassVar[bool] = False  # the subclasses that fill ``create_log`` are the tests
    history_file: ClassVar[Path] = HISTORY

    def create_log(self) -> Log:
        """A new, empty log of the backend under test, with ``StateProjection`` inline."""
        raise NotImplementedError

    def setUp(self) -> None:
        self._scratch = tempfile.TemporaryDirectory()
        self.addCleanup(self._scratch.cleanup)
        self.log = self.create_log()
        self.addCleanup(self.log.close)
        self.state = next(p for p in self.log.inline if isinstance(p, StateProjection))
        self.log.append_existing(history(self.history_file))
        self.conn = self.log.connection()
        self.index = self.state.text_index(self.conn)

    @property
    def scratch(self) -> Path:
        return Path(self._scratch.name)

    def expected(self) -> list[Document]:
        """Each node's, relationship's and observation's document, made from the state
        tables as they are."""
        counts = self.state.counts(self.conn)
        rows = [n for label in counts.labels for n in self.state.nodes_labelled(self.conn, label)]
        hidden = listing(self.conn, [n.identity for n in rows])
        nodes = [  # but the properties each row keeps out (``searchable: false``)
            Document(
                n.identity, "node", entity_text(n.label, searched(n.properties, hidden[n.identity]))
            )
            for n in rows
        ]
        relationships = [
            Document(e.edge.identity, "relationship", entity_text(e.edge.type, e.edge.properties))
            for type in counts.relationship_types
            for e in self.state.edges_typed(self.conn, type)
        ]
        observations = [  # each row's id and text: its first two columns
            Document(row[0], "observation", row[1])
            for row in self.state.snapshot(self.conn)["state_observations"]
        ]
        return sorted([*nodes, *relationships, *observations], key=lambda d: d.identity)

    def test_the_index_says_what_the_state_holds(self) -> None:
        expected = self.expected()
        self.assertTrue(expected)
        self.assertEqual(list(self.index.documents(self.conn)), expected)

    def test_the_index_equals_a_replay(self) -> None:
        live = self.state.snapshot(self.conn)["search_documents"]
        self.assertEqual(live, self.state.rebuilt_snapshot(self.log)["search_documents"])
        self.assertTrue(self.state.equals_replay(self.log, self.conn))

    def test_a_document_gone_astray_differs_from_a_replay(self) -> None:
        lost = next(d for d in self.expected() if d.kind == "relationship")
        self.index.drop(self.conn, [lost.identity])
        self.assertFalse(self.state.equals_replay(self.log, self.conn))
        self.index.put(self.conn, [lost])
        self.assertTrue(self.state.equals_replay(self.log, self.conn))

    def test_every_entity_is_found_by_its_words(self) -> None:
        for document in self.expected():
            hits = self.index.search(self.conn, document.text, document.kind, _PAGE)
            self.assertIn(document.identity, [h.identity for h in hits], document)

    def test_a_word_finds_the_words_it_begins(self) -> None:
        document = next(d for d in self.expected() if d.kind == "node")
        word = document.text.split()[0]
        hits = self.index.search(self.conn, word[:2].upper(), "node", _PAGE)
        self.assertIn(document.identity, [h.identity for h in hits])

    def test_hits_are_ranked_then_ordered_by_identity(self) -> None:
        hits = self.index.search(self.conn, self._common_words(), "node", _PAGE)
        self.assertGreater(len(hits), 2)
        self.assertEqual(hits, sorted(hits, key=lambda h: (h.score, h.identity)))

    def test_pages_follow_one_another(self) -> None:
        query = self._common_words()
        whole = self.index.search(self.conn, query, "node", _PAGE)
        paged, after = [], None
        while page := self.index.search(self.conn, query, "node", 2, after):
            paged += page
            after = page[-1].cursor
        self.assertEqual(paged, whole)

    def test_a_word_finds_the_other_forms_of_its_stem(self) -> None:
        self.index.put(self.conn, [Document("Note{}", _KEPT, "Note\nshe rides a pony")])
        hits = self.index.search(self.conn, "who has ponies?", _KEPT, _PAGE)  # a stem, no prefix
        self.assertIn("Note{}", [h.identity for h in hits])

    def test_stop_words_beside_other_words_are_not_looked_for(self) -> None:
        self.index.put(self.conn, [Document("Note{}", _KEPT, "Note\nwho is it, and where")])
        for query in ("who is Zed", "and where is zed?"):
            self.assertEqual(self.index.search(self.conn, query, _KEPT, 10), [], query)
        hits = self.index.search(self.conn, "where is the note", _KEPT, _PAGE)
        self.assertIn("Note{}", [h.identity for h in hits])

    def test_matched_names_the_words_each_document_was_found_by_stems_included(self) -> None:
        self.index.put(
            self.conn,
            [
                Document("Camp{}", _KEPT, "Camp\nmy best camping memory, by the lake"),
                Document("Lake{}", _KEPT, "Lake\nthe lake froze"),
            ],
        )
        asked = "Where has she camped by the lake?"
        found = {h.identity for h in self.index.search(self.conn, asked, _KEPT, _PAGE)}
        self.assertEqual(found, {"Camp{}", "Lake{}"})
        matched = self.index.matched(self.conn, asked, _KEPT, ["Camp{}", "Lake{}", "None{}"])
        self.assertEqual(matched, {"Camp{}": ["camped", "lake"], "Lake{}": ["lake"], "None{}": []})
        self.assertEqual(
            self.index.matched(self.conn, "lak", _KEPT, ["Lake{}"]), {"Lake{}": ["lak"]}
        )

    def test_a_query_without_words_finds_nothing(self) -> None:
        for query in ("", "   ", '""', "*", "()", "-- ;", '"*" ^ - :'):
            self.assertEqual(self.index.search(self.conn, query, "node", 10), [], query)

    def test_a_cursor_it_did_not_give_is_refused(self) -> None:
        for cursor in ("", "Person", "x:Person", "1.5:"):
            with self.assertRaises(ValueError):
                self.index.search(self.conn, "a", "node", 10, cursor)

    def test_an_observation_is_found_by_its_words_and_only_as_one(self) -> None:
        text = "A witness said the quokka smiled at the ferry."
        observed = ObservationRecorded(
            observation=observation_id(text, "contract", None), text=text, session="s-1"
        )
        self.log.append(
            Actor(agent="contract"),
            lambda tx: tx.emit(draft(observed, [observed.stream], provenance=_PROVENANCE)),
        )
        hits = self.index.search(self.conn, "QUOKKA smiles", "observation", _PAGE)
        self.assertEqual([h.identity for h in hits], [observed.observation])
        self.assertEqual(self.index.search(self.conn, "quokka", "node", _PAGE), [])
        found = [d for d in self.index.documents(self.conn) if d.identity == observed.observation]
        self.assertEqual(found, [Document(observed.observation, "observation", text)])
        self.assertEqual(list(self.index.documents(self.conn)), self.expected())
        self.assertTrue(self.state.equals_replay(self.log, self.conn))

    def test_a_document_is_found_by_its_passages_as_its_event_cut_them(self) -> None:
        """The cuts are the event's: a replay reads them and never cuts the text again
        (this text is short enough to be one passage, were it cut now)."""
        text = "A witness said the quokka smiled. The ferry left at noon."
        observed = ObservationRecorded(
            observation=observation_id(text, "contract", None), text=text, passages=[0, 34]
        )
        self.log.append(
            Actor(agent="contract"),
            lambda tx: tx.emit(draft(observed, [observed.stream], provenance=_PROVENANCE)),
        )
        first, second = (f"{observed.observation}#{start}" for start in (0, 34))
        hits = self.index.search(self.conn, "quokka", "observation", _PAGE)
        self.assertEqual([h.identity for h in hits], [first])
        hits = self.index.search(self.conn, "ferry noon", "observation", _PAGE)
        self.assertEqual([h.identity for h in hits], [second])
        kept = sorted(
            (d for d in self.index.documents(self.conn) if d.identity.startswith(first[:36])),
            key=lambda d: d.identity,
        )
        self.assertEqual(
            kept,
            [
                Document(first, "observation", "A witness said the quokka smiled. "),
                Document(second, "observation", "The ferry left at noon."),
            ],
        )
        self.assertTrue(self.state.equals_replay(self.log, self.conn))

    def _found(self, query: str, kind: str, visible: frozenset[str] | None) -> list[str]:
        return [h.identity for h in self.index.search(self.conn, query, kind, _PAGE, None, visible)]

    def test_a_document_is_found_only_by_a_reader_seeing_both_its_scopes(self) -> None:
        self.index.put(
            self.conn,
            [
                Document("Note{}", _KEPT, "Note\nthe quokka", "a", "a"),
                Document("LINK{}", "relationship", "LINK\nthe quokka", "a", "b"),
            ],
        )
        for visible, notes, relationships in (
            (None, ["Note{}"], ["LINK{}"]),
            (frozenset({"a"}), ["Note{}"], []),
            (frozenset({"b"}), [], []),
            (frozenset({"a", "b"}), ["Note{}"], ["LINK{}"]),
            (frozenset({"b", "c"}), [], []),
        ):
            self.assertEqual(self._found("quokka", _KEPT, visible), notes, visible)
            self.assertEqual(self._found("quokka", "relationship", visible), relationships)

    def test_an_empty_grant_finds_nothing(self) -> None:
        query = self._common_words()
        self.assertTrue(self._found(query, "node", None))
        for kind in ("node", "relationship", "observation"):
            self.assertEqual(self._found(query, kind, frozenset()), [], kind)

    def test_a_moved_document_is_found_only_under_its_new_scope(self) -> None:
        self.index.put(self.conn, [Document("Note{}", _KEPT, "Note\nthe quokka", "a", "a")])
        self.index.put(self.conn, [Document("Note{}", _KEPT, "Note\nthe quokka", "b", "b")])
        self.assertEqual(self._found("quokka", _KEPT, frozenset({"a"})), [])
        self.assertEqual(self._found("quokka", _KEPT, frozenset({"b"})), ["Note{}"])
        [moved] = self.index.documents_of(self.conn, ["Note{}"])
        self.assertEqual((moved.scope_from, moved.scope_to), ("b", "b"))

    # each backend's subclass runs this one method (read-only on its own log): not flaky
    @settings(
        max_examples=150, deadline=None, suppress_health_check=[HealthCheck.differing_executors]
    )
    @given(st.text())
    def test_any_string_is_answered(self, query: str) -> None:
        hits = self.index.search(self.conn, query, "node", 10)
        self.assertLessEqual(len(hits), 10)

    def _common_words(self) -> str:
        """The labels of the history's nodes: words many documents share."""
        return " ".join(self.state.counts(self.conn).labels)
