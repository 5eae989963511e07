"""The log contract as a reusable test case, shipped with the package (as the ``eventsourcing``
library ships its recorder tests): a backend subclasses it, says how to make a log and how
to go behind the log's back, and must pass every test.

    class TestMyLog(LogContractTestCase):
        __test__ = True

        def create_log_at(self, name) -> Log: ...
        def rewrite(self, log, sql) -> None: ...   # run SQL with the backend's own tools

Plain ``unittest``, so neither pytest nor any plug-in is needed to run it. (Under plain
``unittest``, import the module rather than the class, so the base case itself, which
has no log to test, is not collected.)
"""

from __future__ import annotations

import itertools
import tempfile
import threading
import unittest
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

from writegate.eventlog.canonical import GENESIS_HASH
from writegate.eventlog.contract import Log, LogTransaction
from writegate.eventlog.errors import EventLogError, IdempotencyKeyReused, VersionConflict
from writegate.eventlog.events import Actor, DraftEvent

ADA = Actor(agent="ada", session="s-1", transport="test")
BOB = Actor(agent="bob", session="s-2", transport="test")


def note(text: str, *streams: str, expected: dict[str, int] | None = None) -> DraftEvent:
    """A small event for the tests: the log stores payloads it does not understand."""
    return DraftEvent(
        type="test.noted",
        payload={"text": text},
        streams=streams,
        provenance={"source": "contract"},
        request={"text": text},
        expected_versions=expected or {},
    )


def emitting(*drafts: DraftEvent) -> Callable[[LogTransaction], None]:
    def decide(tx: LogTransaction) -> None:
        for draft in drafts:
            tx.emit(draft)

    return decide


class LogContractTestCase(unittest.TestCase):
    """Every promise of ``writegate.eventlog.contract.Log``, checked against a real backend."""

    __test__: ClassVar[bool] = False  # the subclasses that fill ``create_log_at`` are the tests

    def create_log(self) -> Log:
        return self.create_log_at("log")

    def create_log_at(self, name: str) -> Log:
        """A new, empty log of the backend under test, distinct for each ``name``."""
        raise NotImplementedError

    def rewrite(self, log: Log, sql: str) -> None:
        """Run ``sql`` against the backend directly (as an intruder would); may raise."""
        raise NotImplementedError

    def tamper(self, log: Log, seq: int) -> None:
        """Change event ``seq``'s stored payload behind the log's back (bypassing its guards)."""
        raise NotImplementedError

    def setUp(self) -> None:
        self._scratch = tempfile.TemporaryDirectory()
        self.addCleanup(self._scratch.cleanup)
        self.log = self.create_log()
        self.addCleanup(self.log.close)

    @property
    def scratch(self) -> Path:
        return Path(self._scratch.name)

    def append(self, *drafts: DraftEvent, actor: Actor = ADA, **options: Any) -> list[int]:
        outcome = self.log.append(actor, emitting(*drafts), **options)
        return [event.seq for event in outcome.events]

    # -- appending ---------------------------------------------------------------------

    def test_seqs_are_gapless_and_hashes_chain(self) -> None:
        self.assertEqual(self.log.head(), (0, GENESIS_HASH))
        self.assertEqual(self.append(note("a"), note("b")), [1, 2])
        self.assertEqual(self.append(note("c")), [3])
        events = self.log.read_range(1, 3)
        self.assertEqual(events[0].prev_hash, GENESIS_HASH)
        for before, after in itertools.pairwise(events):
            self.assertEqual(after.prev_hash, before.hash)
        self.assertEqual(self.log.head(), (3, events[-1].hash))
        self.assertTrue(self.log.verify().ok)

    def test_an_append_is_all_or_nothing(self) -> None:
        self.append(note("kept"))

        def decide(tx: LogTransaction) -> None:
            tx.emit(note("lost 1"))
            tx.emit(note("lost 2"))
            raise RuntimeError("decided against it")

        with self.assertRaises(RuntimeError):
            self.log.append(ADA, decide)
        self.assertEqual(self.log.head()[0], 1)
        self.assertEqual(self.append(note("next")), [2])
        self.assertTrue(self.log.verify().ok)

    def test_an_append_that_emits_nothing_writes_nothing(self) -> None:
        outcome = self.log.append(ADA, lambda tx: None, idempotency_key="k")
        self.assertEqual(outcome.events, [])
        self.assertEqual(self.log.head()[0], 0)

    def test_expected_versions_are_checked_under_the_write_lock(self) -> None:
        self.append(note("new", "s", expected={"s": 0}))
        with self.assertRaises(VersionConflict) as raised:
            self.append(note("again", "s", expected={"s": 0}))
        self.assertEqual((raised.exception.expected, raised.exception.current), (0, 1))
        self.append(note("second", "s", expected={"s": 1}))
        self.assertEqual(self.log.stream_version("s"), 2)
        self.assertEqual(self.log.head()[0], 2)

    def test_stream_versions_count_per_stream_within_an_append(self) -> None:
        outcome = self.log.append(ADA, emitting(note("x", "a", "b"), note("y", "a")))
        self.assertEqual([e.streams for e in outcome.events], [{"a": 1, "b": 1}, {"a": 2}])
        self.assertEqual((self.log.stream_version("a"), self.log.stream_version("b")), (2, 1))
        self.assertEqual(self.log.stream_version("never"), 0)

    def test_a_copy_of_the_events_has_the_same_chain(self) -> None:
        self.append(note("a", "s"), note("b"))
        self.append(note("c", "s"), actor=BOB)
        events = list(self.log.iter_events())
        copy = self.create_log_at("copy")
        self.addCleanup(copy.close)
        self.assertEqual(copy.append_existing(events), self.log.head())
        self.assertEqual(list(copy.iter_events()), events)
        self.assertEqual(copy.stream_version("s"), 2)
        self.assertTrue(copy.verify().ok)

    def test_a_copy_refuses_events_out_of_place_or_altered(self) -> None:
        self.append(note("a"), note("b"))
        first, second = list(self.log.iter_events())
        copy = self.create_log_at("copy")
        self.addCleanup(copy.close)
        with self.assertRaises(EventLogError):
            copy.append_existing([second])  # not next
        forged = first.model_copy(update={"payload": {"text": "forged"}})
        with self.assertRaises(EventLogError):
            copy.append_existing([forged])  # does not hash to its hash
        self.assertEqual(copy.head(), (0, GENESIS_HASH))

    # -- idempotency -------------------------------------------------------------------

    def test_a_retry_under_the_same_key_returns_the_first_events(self) -> None:
        first = self.log.append(ADA, emitting(note("a")), idempotency_key="k", request={"r": 1})
        again = self.log.append(ADA, emitting(note("a")), idempotency_key="k", request={"r": 1})
        self.assertFalse(first.replayed)
        self.assertTrue(again.replayed)
        self.assertEqual(again.events, first.events)
        self.assertEqual(self.log.head()[0], 1)
        self.assertEqual(self.log.earlier_append(ADA, "k", {"r": 1}), first.events)
        self.assertIsNone(self.log.earlier_append(ADA, "other", {"r": 1}))

    def test_a_retry_returns_the_first_events_whatever_its_decide_would_do_now(self) -> None:
        first = self.log.append(ADA, emitting(note("a")), idempotency_key="k", request={"r": 1})
        refuses = emitting(note("b", expected={"s": 9}))  # a version conflict: a refusal now
        for decide in (emitting(), refuses):  # nothing to emit now, or refused
            again = self.log.append(ADA, decide, idempotency_key="k", request={"r": 1})
            self.assertTrue(again.replayed)
            self.assertEqual(again.events, first.events)
        self.assertEqual(self.log.head()[0], 1)

    def test_the_same_key_for_another_request_is_refused(self) -> None:
        self.log.append(ADA, emitting(note("a")), idempotency_key="k", request={"r": 1})
        with self.assertRaises(IdempotencyKeyReused):
            self.log.append(ADA, emitting(note("b")), idempotency_key="k", request={"r": 2})
        self.assertEqual(self.log.head()[0], 1)

    def test_keys_are_scoped_per_agent(self) -> None:
        self.log.append(ADA, emitting(note("a")), idempotency_key="k", request={"r": 1})
        bobs = self.log.append(BOB, emitting(note("b")), idempotency_key="k", request={"r": 2})
        self.assertFalse(bobs.replayed)
        self.assertEqual(self.log.head()[0], 2)

    # -- reading -----------------------------------------------------------------------

    def test_reads_filter_and_page_in_seq_order(self) -> None:
        for i in range(7):
            self.append(note(f"n{i}", f"s{i % 2}"), actor=ADA if i % 3 else BOB)
        seen: list[int] = []
        cursor: int | None = 0
        while cursor is not None:
            page = self.log.read(after_seq=cursor, limit=3)
            seen += [e.seq for e in page.events]
            cursor = page.next_after
        self.assertEqual(seen, list(range(1, 8)))
        self.assertEqual([e.seq for e in self.log.read(stream="s0").events], [1, 3, 5, 7])
        self.append(note("both", "s0", "s1"))
        both = self.log.read(stream=["s1", "s0"], after_seq=3, limit=3)
        self.assertEqual(([e.seq for e in both.events], both.next_after), ([4, 5, 6], 6))
        self.assertEqual(
            [e.seq for e in self.log.read(stream=["s1", "s0"], after_seq=6).events], [7, 8]
        )
        self.assertEqual(self.log.read(stream=[]).events, [])
        self.assertEqual([e.seq for e in self.log.read(agent="bob").events], [1, 4, 7])
        self.assertEqual([e.seq for e in self.log.read(to_seq=2).events], [1, 2])
        self.assertEqual(len(self.log.read(types=["test.noted"]).events), 8)
        self.assertEqual(self.log.read(types=["other"]).events, [])
        self.assertEqual([e.seq for e in self.log.iter_events(after_seq=5)], [6, 7, 8])
        scattered = self.log.read_seqs([6, 2, 2, 99])
        self.assertEqual(sorted(scattered), [2, 6])
        self.assertEqual(scattered[6], self.log.read_range(6, 6)[0])
        self.assertEqual(self.log.read_seqs([]), {})

    def test_replays_read_the_cores_of_the_events(self) -> None:
        self.append(note("a", "s"), note("b"))
        self.append(note("c"), actor=BOB)
        events = list(self.log.iter_events())
        cores = list(self.log.iter_replayed())
        self.assertEqual(len(cores), 3)
        for core, event in zip(cores, events, strict=True):
            for field in type(core).model_fields:
                self.assertEqual(getattr(core, field), getattr(event, field), field)
        self.assertEqual([c.seq for c in self.log.iter_replayed(after_seq=1, to_seq=2)], [2])

    def test_latest_and_hash_at(self) -> None:
        self.assertIsNone(self.log.latest("s"))
        self.append(note("a", "s"), note("b", "s"), note("c", "t"))
        latest = self.log.latest("s")
        assert latest is not None
        self.assertEqual((latest.seq, latest.payload), (2, {"text": "b"}))
        self.assertEqual(self.log.hash_at(3), self.log.head()[1])
        self.assertIsNone(self.log.hash_at(4))

    def test_time_never_runs_backwards_and_ranges_are_inclusive(self) -> None:
        for text in ("a", "b", "c"):
            self.append(note(text))
        events = list(self.log.iter_events())
        times = [e.occurred_at for e in events]
        self.assertEqual(times, sorted(times))
        middle = events[1].occurred_at
        self.assertEqual(self.log.last_seq_at(middle - timedelta(days=1)), 0)
        self.assertGreaterEqual(self.log.last_seq_at(middle), 2)
        within = self.log.read(since=middle, until=middle).events
        self.assertIn(2, [e.seq for e in within])

    # -- integrity ---------------------------------------------------------------------

    def test_verify_names_the_first_altered_event(self) -> None:
        self.append(note("a"), note("b"), note("c"))
        self.assertEqual(self.log.missing_triggers(), [])
        self.tamper(self.log, 2)
        report = self.log.verify()
        self.assertFalse(report.ok)
        self.assertEqual(report.first_bad_seq, 2)

    def test_history_cannot_be_rewritten_through_the_database(self) -> None:
        self.append(note("a", "s"), note("b"), idempotency_key="k", request={"r": 1})
        for sql in (
            "UPDATE events SET payload = '{}' WHERE seq = 1",
            "DELETE FROM events WHERE seq = 2",
            "DELETE FROM event_streams",
            "UPDATE idempotency SET key = 'x'",
        ):
            with self.assertRaises(Exception, msg=sql):  # noqa: B017 - each backend's own error
                self.rewrite(self.log, sql)
        self.assertEqual(self.log.head()[0], 2)
        self.assertTrue(self.log.verify().ok)

    def test_a_snapshot_holds_one_commit_while_writers_go_on(self) -> None:
        self.append(note("a"))
        with self.log.snapshot():
            before = self.log.head()
            writer = threading.Thread(target=lambda: self.append(note("b"), actor=BOB))
            writer.start()
            writer.join()
            self.assertEqual(self.log.head(), before)
            self.assertEqual(len(list(self.log.iter_events())), 1)
        self.assertEqual(self.log.head()[0], 2)

    def test_concurrent_appenders_are_serialised_without_loss(self) -> None:
        errors: list[BaseException] = []

        def work(agent: str) -> None:
            try:
                for i in range(25):
                    self.append(note(f"{agent}-{i}", agent), actor=Actor(agent=agent))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(f"agent-{n}",)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(errors, [])
        self.assertEqual(self.log.head()[0], 200)
        self.assertTrue(self.log.verify().ok)
        for n in range(8):
            self.assertEqual(self.log.stream_version(f"agent-{n}"), 25)

    # -- group commit ------------------------------------------------------------------

    def _queued_behind_a_held_append(
        self, appends: list[Callable[[], list[int]]]
    ) -> tuple[list[list[int] | BaseException], int]:
        """Run ``appends`` on threads while a first append holds the group running, so they
        all queue and commit as the next group. Each one's seqs or what it raised, and how
        many groups committed."""
        held, release = threading.Event(), threading.Event()

        def holding(tx: LogTransaction) -> None:
            tx.emit(note("held"))
            held.set()
            release.wait(10)

        groups = self.log.commit_groups
        before = groups.groups
        first = threading.Thread(target=self.log.append, args=(ADA, holding))
        first.start()
        self.assertTrue(held.wait(10))
        results: list[list[int] | BaseException] = [[] for _ in appends]

        def run(index: int) -> None:
            try:
                results[index] = appends[index]()
            except BaseException as exc:
                results[index] = exc

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(appends))]
        for thread in threads:
            thread.start()
        for _ in range(500):  # until every append waits in the queue (at most 5 s)
            if (queued := groups.waiting) == len(appends):
                break
            threading.Event().wait(0.01)
        release.set()
        for thread in [first, *threads]:
            thread.join()
        self.assertEqual(queued, len(appends), "the appends did not queue for one group")
        return results, groups.groups - before

    def test_appends_arriving_together_commit_as_one_group(self) -> None:
        def writer(i: int) -> Callable[[], list[int]]:
            return lambda: self.append(note(f"w{i}", f"s{i}"), actor=BOB)

        results, groups = self._queued_behind_a_held_append([writer(i) for i in range(6)])
        self.assertEqual(groups, 2)  # the held append, then the six together
        seqs = [seq for r in results if not isinstance(r, BaseException) for seq in r]
        self.assertEqual(sorted(seqs), list(range(2, 8)))
        self.assertEqual(self.log.head()[0], 7)
        self.assertTrue(self.log.verify().ok)

    def test_a_refused_member_is_rolled_back_alone(self) -> None:
        self.append(note("base", "fixed"))

        def raising(tx: LogTransaction) -> None:
            tx.emit(note("half", "other"))
            raise ValueError("refused")

        appends: list[Callable[[], list[int]]] = [
            lambda: self.append(note("kept-1", "a")),
            lambda: [e.seq for e in self.log.append(BOB, raising).events],
            lambda: self.append(note("stale", "fixed", expected={"fixed": 0})),
            lambda: self.append(note("kept-2", "b")),
        ]
        results, groups = self._queued_behind_a_held_append(appends)
        self.assertEqual(groups, 2)
        self.assertIsInstance(results[1], ValueError)
        self.assertIsInstance(results[2], VersionConflict)
        self.assertEqual([results[0], results[3]], [[3], [4]])  # no gap where the others were
        kept = [e.payload for e in self.log.iter_events()]
        self.assertEqual(kept, [{"text": t} for t in ("base", "held", "kept-1", "kept-2")])
        self.assertEqual(self.log.stream_version("other"), 0)
        self.assertTrue(self.log.verify().ok)

    def test_a_key_is_exact_within_a_group(self) -> None:
        same = note("once")
        appends: list[Callable[[], list[int]]] = [
            lambda: self.append(same, idempotency_key="k", request={"r": 1}),
            lambda: self.append(same, idempotency_key="k", request={"r": 1}),
            lambda: self.append(same, idempotency_key="k", request={"r": 2}),
        ]
        results, groups = self._queued_behind_a_held_append(appends)
        self.assertEqual(groups, 2)
        self.assertEqual(results[0], [2])
        self.assertEqual(results[1], [2])  # the retry answered with the first append's events
        self.assertIsInstance(results[2], IdempotencyKeyReused)
        self.assertEqual(self.log.head()[0], 2)
