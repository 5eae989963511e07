"""The log's erasure promises as a reusable test case (``sealing``), beside ``testing``'s:

    class TestMyLogErasure(ErasureContractTestCase):
        __test__ = True

        def create_log_at(self, name) -> Log: ...
        def rewrite(self, log, sql) -> None: ...   # run SQL behind the log's back
        def tamper(self, log, seq) -> None: ...    # edit event seq's payload behind its guards
        def raw_bytes(self, log) -> bytes: ...     # every byte of the log's files on disk

Sealed values read back clear, the chain never holds them, a forgetting leaves the chain
verifying with the erased events counted, an anchor taken before still verifies, an edit of
a surviving value or of an erased event is still tampering, an expired value is erased
while its subject's other values read, no byte of a forgotten value
is left in the database's files, a copy continued past a forgetting forgets it too, and a
migration keeps the old chain's hashes (and refuses a log that fails ``verify``).
"""

from __future__ import annotations

import os
import tempfile
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from writegate.eventlog.contract import Log, LogTransaction
from writegate.eventlog.copying import copy_log
from writegate.eventlog.errors import EventLogError
from writegate.eventlog.events import Actor, DraftEvent, EventCore
from writegate.eventlog.expiring import ExpirePlan, held
from writegate.eventlog.migrating import MIGRATED, migrate_log, old_hash
from writegate.eventlog.sealing import EXPIRED, FORGOTTEN, SubjectsForgotten, ValuesExpired

ADA = Actor(agent="ada", session="s-1", transport="test")
ADMIN = Actor(agent="admin", session="s-9", transport="test")
PERSON = 'node:Person{"name":"%s"}'  # a locator as a graph would name a subject


class Keys(BaseModel):
    name: str | None  # None: erased
    city: str | None


class PersonNoted(BaseModel):
    """The test's event: a person's sealed keys and a note in the clear."""

    keys: Keys
    note: str


def _emitting(draft: DraftEvent) -> Callable[[LogTransaction], None]:
    def decide(tx: LogTransaction) -> None:
        tx.emit(draft)

    return decide


def keys(event: EventCore) -> Keys:
    return PersonNoted.model_validate(event.payload).keys


class ErasureContractTestCase(unittest.TestCase):
    """Every erasure promise of ``writegate.eventlog.contract.Log``, against a real backend."""

    __test__: ClassVar[bool] = False

    def create_log_at(self, name: str) -> Log:
        raise NotImplementedError

    def rewrite(self, log: Log, sql: str) -> None:
        raise NotImplementedError

    def tamper(self, log: Log, seq: int) -> None:
        raise NotImplementedError

    def raw_bytes(self, log: Log) -> bytes:
        """Every byte the log's database keeps on disk for it (after what ``forget`` did)."""
        raise NotImplementedError

    def setUp(self) -> None:
        self._scratch = tempfile.TemporaryDirectory()
        self.addCleanup(self._scratch.cleanup)
        self.log = self.create_log_at("erasure")
        self.addCleanup(self.log.close)
        self.marker = f"MARK{os.urandom(6).hex()}"  # found nowhere unless written

    @property
    def scratch(self) -> Path:
        return Path(self._scratch.name)

    def write_person(self, name: str, city: str, *, note: str = "plain") -> int:
        """One event naming a person: name and city sealed, the note in the clear."""
        seqs: list[int] = []

        def decide(tx: LogTransaction) -> None:
            who = PERSON % name
            sealed = {"name": tx.seal(who, name), "city": tx.seal(who, city)}
            stream = f"node:Person~{tx.subject(who)}"
            draft = DraftEvent(
                "test.person",
                {"keys": sealed, "note": note},
                (stream,),
                {"source": "contract"},
                {"name": tx.seal(who, name), "note": note},
            )
            event = tx.emit(draft)
            assert keys(event) == Keys(name=name, city=city)
            seqs.append(event.seq)

        self.log.append(ADA, decide)
        return seqs[0]

    def stored(self, seq: int) -> list[Any]:
        row = (
            self.log.connection()
            .execute(
                "SELECT streams, payload, provenance, request FROM events WHERE seq = ?", (seq,)
            )
            .fetchone()
        )
        return list(row)

    # -- sealing ---------------------------------------------------------------------

    def test_sealed_values_read_back_clear_and_the_chain_holds_none(self) -> None:
        seq = self.write_person(self.marker, f"{self.marker}-city")
        assert self.marker not in "".join(self.stored(seq))
        for event in (
            self.log.read_range(seq, seq)[0],
            self.log.read_seqs([seq])[seq],
            self.log.read().events[0],
        ):
            assert keys(event).name == self.marker
            assert event.request == {"name": self.marker, "note": "plain"}
        (core,) = list(self.log.iter_replayed())
        assert keys(core).city == f"{self.marker}-city"
        (stream,) = core.streams
        assert self.log.latest(stream) == core
        assert self.log.verify().ok

    def test_an_event_may_not_carry_a_sealed_form_it_did_not_seal(self) -> None:
        seq = self.write_person("Ada", "London")
        marker = self.stored(seq)[1].split('"$sealed":"')[1].split('"')[0]  # Ada's city
        for value in ({"$sealed": marker}, {"$sealed": "short"}):
            draft = DraftEvent("test.person", {"keys": {"name": value}, "note": "x"}, ("s",))
            with self.assertRaisesRegex(EventLogError, "sealed"):
                self.log.append(ADA, _emitting(draft))
        assert self.log.head()[0] == seq

    def test_one_locator_is_one_subject_across_appends(self) -> None:
        assert self.log.subject_of(PERSON % "Ada") is None
        first, second = self.write_person("Ada", "London"), self.write_person("Ada", "Paris")
        streams = [list(self.log.read_range(s, s)[0].streams) for s in (first, second)]
        assert streams[0] == streams[1] == [f"node:Person~{self.log.subject_of(PERSON % 'Ada')}"]
        assert self.log.stream_version(streams[0][0]) == 2

    # -- forgetting ------------------------------------------------------------------

    def test_a_dry_run_says_what_would_go_and_changes_nothing(self) -> None:
        seqs = [self.write_person("Ada", "London"), self.write_person("Ada", "Paris")]
        self.write_person("Bob", "Rome")
        head = self.log.head()
        plan = self.log.forget_plan([PERSON % "Ada", PERSON % "Nobody"])
        assert (len(plan.subjects), plan.events, plan.values) == (1, seqs, 3)
        assert self.log.head() == head
        assert keys(self.log.read_range(1, 1)[0]).name == "Ada"

    def test_forgetting_erases_the_values_and_the_chain_still_proves(self) -> None:
        seqs = [self.write_person("Ada", "London"), self.write_person("Ada", "Paris")]
        bob = self.write_person("Bob", "Rome")
        anchor = self.log.head()
        plan, receipt = self.log.forget(
            ADMIN, [PERSON % "Ada"], reason="erasure request", also=lambda tx, p: {"mine": 7}
        )
        assert receipt is not None
        assert receipt.type == FORGOTTEN
        said = SubjectsForgotten.model_validate(receipt.payload)
        assert (said.events, said.reason, said.subjects) == (seqs, "erasure request", plan.subjects)
        assert said.counts == {"subject_keys": 1, "sealed_values": 3, "mine": 7}
        erased = self.log.read_range(seqs[0], seqs[0])[0]
        assert erased.payload == {"keys": {"name": None, "city": None}, "note": "plain"}
        assert keys(self.log.read_range(bob, bob)[0]).name == "Bob"
        for batch in (5000, 1):  # the receipt in the page of the events, and pages after
            report = self.log.verify(batch=batch)
            assert report.ok, report.describe()
            assert report.erased == 2
        assert self.log.hash_at(anchor[0]) == anchor[1]  # an anchor taken before

    def test_an_expired_value_is_erased_while_its_subject_still_reads(self) -> None:
        first, second = self.write_person("Ada", "London"), self.write_person("Ada", "Paris")
        london = self.stored(first)[1].split('"$sealed":"')[1].split('"')[0].split(".")
        value = (london[0], london[1])

        def find(conn: Any) -> ExpirePlan:
            return ExpirePlan(list(held(conn, [value])), [first])

        _, receipt = self.log.expire(ADMIN, find, policy={"Person.city": "P1D"})
        assert receipt is not None
        assert receipt.type == EXPIRED
        said = ValuesExpired.model_validate(receipt.payload)
        assert (said.values, said.events, said.counts) == (
            [".".join(value)],
            [first],
            {"sealed_values": 1},
        )
        assert keys(self.log.read_range(first, first)[0]) == Keys(name="Ada", city=None)
        assert keys(self.log.read_range(second, second)[0]) == Keys(name="Ada", city="Paris")
        report = self.log.verify()
        assert report.ok, report.describe()
        assert report.erased == 1
        again, none = self.log.expire(ADMIN, find, policy={})
        assert (again.values, none) == ([], None)
        self.tamper(self.log, first)
        assert not self.log.verify().ok

    def test_forgetting_a_subject_never_sealed_appends_nothing(self) -> None:
        self.write_person("Ada", "London")
        head = self.log.head()
        plan, receipt = self.log.forget(ADMIN, [PERSON % "Nobody"], reason="none")
        assert (plan.subjects, receipt, self.log.head()) == ([], None, head)

    def test_a_subject_written_again_after_forgetting_is_a_new_subject(self) -> None:
        first = self.write_person("Ada", "London")
        self.log.forget(ADMIN, [PERSON % "Ada"], reason="asked")
        assert self.log.subject_of(PERSON % "Ada") is None
        again = self.write_person("Ada", "Oslo")
        assert (
            self.log.read_range(first, first)[0].streams
            != self.log.read_range(again, again)[0].streams
        )
        assert keys(self.log.read_range(again, again)[0]).city == "Oslo"
        assert self.log.verify().ok

    def test_a_copy_carries_the_sealed_values_and_the_erasures(self) -> None:
        ada = self.write_person("Ada", "London")
        bob = self.write_person("Bob", "Rome")
        self.log.forget(ADMIN, [PERSON % "Bob"], reason="asked")
        copy = self.create_log_at("copy")
        self.addCleanup(copy.close)
        assert copy_log(self.log, copy) == self.log.head()
        assert keys(copy.read_range(ada, ada)[0]) == Keys(name="Ada", city="London")
        assert keys(copy.read_range(bob, bob)[0]) == Keys(name=None, city=None)
        report = copy.verify()
        assert (report.ok, report.erased) == (True, 1)
        assert copy.forget_plan([PERSON % "Ada"]).events == [ada]

    def test_a_copy_continued_past_a_forgetting_forgets_it_too(self) -> None:
        ada = self.write_person(self.marker, f"{self.marker}-city")
        self.write_person("Bob", "Rome")
        copy = self.create_log_at("continued")
        self.addCleanup(copy.close)
        copy_log(self.log, copy)
        assert copy.subject_of(PERSON % self.marker) is not None  # the test can fail
        self.log.forget(ADMIN, [PERSON % self.marker], reason="asked")
        assert copy_log(self.log, copy) == self.log.head()
        assert copy.subject_of(PERSON % self.marker) is None
        assert keys(copy.read_range(ada, ada)[0]) == Keys(name=None, city=None)
        report = copy.verify()
        assert (report.ok, report.erased) == (True, 1)
        assert self.marker.encode() not in self.raw_bytes(copy)
        assert b"Rome" in self.raw_bytes(copy)

    def test_a_migration_keeps_the_old_hashes_behind_its_receipt(self) -> None:
        self.write_person("Ada", "London")
        anchor = self.log.head()
        dest = self.create_log_at("migrated")
        self.addCleanup(dest.close)
        made = migrate_log(self.log, dest, ADMIN, lambda event, seals: event)
        assert (made.receipt.from_head_seq, made.receipt.from_head_hash) == anchor
        assert dest.read_range(made.head_seq, made.head_seq)[0].type == MIGRATED
        assert old_hash(dest, anchor[0]) == anchor[1]
        assert dest.verify().ok
        self.tamper(self.log, anchor[0])
        refused = self.create_log_at("refused")
        self.addCleanup(refused.close)
        with self.assertRaisesRegex(EventLogError, "fails verify"):
            migrate_log(self.log, refused, ADMIN, lambda event, seals: event)
        assert refused.head()[0] == 0

    # -- what verify still catches ---------------------------------------------------

    def test_an_edited_surviving_value_is_tampering(self) -> None:
        seq = self.write_person("Ada", "London")
        self.rewrite(self.log, "UPDATE sealed_values SET value = '\"Eve\"' WHERE value = '\"Ada\"'")
        report = self.log.verify()
        assert not report.ok
        assert report.first_bad_seq == seq
        assert "altered" in (report.problem or "")

    def test_a_value_removed_without_a_receipt_is_tampering(self) -> None:
        seq = self.write_person("Ada", "London")
        self.rewrite(self.log, "DELETE FROM sealed_values WHERE value = '\"London\"'")
        self.write_person("Bob", "Rome")
        _, receipt = self.log.forget(ADMIN, [PERSON % "Bob"], reason="another subject's")
        assert receipt is not None
        report = self.log.verify(batch=1)
        assert not report.ok
        assert report.first_bad_seq == seq
        assert "no receipt" in (report.problem or "")

    def test_an_edited_erased_event_is_tampering(self) -> None:
        seq = self.write_person("Ada", "London")
        self.log.forget(ADMIN, [PERSON % "Ada"], reason="asked")
        self.tamper(self.log, seq)
        report = self.log.verify()
        assert not report.ok
        assert report.first_bad_seq == seq

    # -- the bytes -------------------------------------------------------------------

    def test_no_byte_of_a_forgotten_value_is_left_in_the_files(self) -> None:
        for i in range(50):  # several pages of values, the subject's among others'
            self.write_person(f"other-{i}", f"city-{i}" * 20)
        self.write_person(self.marker, f"{self.marker}-city", note="kept")
        self.write_person(self.marker, f"{self.marker}-town", note="kept")
        assert self.marker.encode() in self.raw_bytes(self.log)  # the test can fail
        self.log.forget(ADMIN, [PERSON % self.marker], reason="asked")
        assert self.marker.encode() not in self.raw_bytes(self.log)
        assert b"city-49" in self.raw_bytes(self.log)
