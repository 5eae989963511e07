"""Merging personal nodes, on SQLite and PostgreSQL: the merge's events and its request keep
no clear value of either person (each sealed with its own subject's key); once merged the
two are one person, so forgetting either forgets both and leaves no byte of them; an unmerge
gives the duplicate back, sealed as before, and after a forgetting is refused."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import permutations
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT, FIXTURES
from tests.personal import SEAL, digests, raw_bytes, works_at_acme
from writegate.eventlog.canonical import canonical_json
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult
from writegate.gate.merges.operations import MergeResult, UnmergeResult
from writegate.gate.models import Rejected
from writegate.gate.reads.reader import GraphReader

REVIEW: dict[str, Any] = {"source": "review", "extraction_method": "manual"}


@dataclass
class Two:
    """Two Person nodes of one person, each with an email only it holds."""

    gate: Gate
    survivor: str
    duplicate: str
    mails: tuple[str, str]

    def merge(self) -> MergeResult:
        merged = self.gate.merge_nodes(
            label="Person",
            survivor_keys={"name": self.survivor},
            duplicate_keys={"name": self.duplicate},
            reason="the same person",
            **REVIEW,
        )
        assert isinstance(merged, MergeResult), merged
        return merged

    def needles(self) -> list[str]:
        return [self.survivor, self.duplicate, *self.mails]

    def stored_since(self, seq: int) -> str:
        """What the log keeps of the events after ``seq``: streams, payloads and requests."""
        events = self.gate.log.read(after_seq=seq, limit=1000, sealed=True).events
        return "".join(str((e.streams, e.payload, e.request)) for e in events)

    def node(self, name: str) -> tuple[dict[str, object], object] | None:
        """The keys and email of the node ``name`` names (None: none)."""
        found = GraphReader(self.gate.log, self.gate.state).open_nodes(
            [{"label": "Person", "merge_keys": {"name": name}}], self.gate.current_schema()
        )
        if not found.nodes:
            return None
        return found.nodes[0].merge_keys, found.nodes[0].properties.get("email")


@pytest.fixture
def two(any_db: str | Path) -> Iterator[Two]:
    with Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(FIXTURES / "personal_schema.yaml").status == "published"
        marker = f"MARK{os.urandom(6).hex()}"
        pair = Two(gate, f"{marker} Hopper", f"{marker} B. Hopper", ("g1@x.org", "g2@x.org"))
        for name, mail in zip((pair.survivor, pair.duplicate), pair.mails, strict=True):
            created = gate.write_node(
                label="Person",
                merge_keys={"name": name},
                properties={"email": mail},
                resolution="new",
                source="test",
                extraction_method="manual",
            )
            assert created.status == "written", created
        works_at_acme(gate, pair.survivor, pair.duplicate)
        yield pair


def test_a_merge_of_personal_nodes_keeps_no_clear_value_of_either(two: Two) -> None:
    head = two.gate.log.head()[0]
    merged = two.merge()
    assert merged.survivor.startswith("Person~")
    assert merged.merged.startswith("Person~")
    stored = two.stored_since(head)
    assert "sealed" in stored  # the test can fail: the merge's events do hold the values
    for needle in two.needles():
        assert needle not in stored
    survivor = two.node(two.survivor)
    assert survivor is not None
    assert survivor[0] == {"name": two.survivor}
    assert survivor[1] in two.mails  # as the schema's conflict policy chose
    assert two.node(two.duplicate) is None  # an alias now, as any merged node is


@pytest.mark.parametrize("asked", ["survivor", "duplicate"])
def test_forgetting_either_of_merged_nodes_forgets_both(
    two: Two, asked: str, request: pytest.FixtureRequest
) -> None:
    merged = two.merge()
    before = raw_bytes(two.gate, request)
    assert two.duplicate.encode() in before  # the test can fail
    name = two.survivor if asked == "survivor" else two.duplicate
    done = two.gate.forget("Person", {"name": name}, reason="asked by the person")
    assert isinstance(done, ForgetResult), done
    assert {done.node, *done.merged} == {merged.survivor, merged.merged}
    stored = two.stored_since(0)
    raw = raw_bytes(two.gate, request)
    for needle in two.needles():
        assert needle not in stored
        assert needle.encode() not in raw, needle
    assert b"Acme" in raw
    assert two.node(two.survivor) is None
    assert two.node(two.duplicate) is None
    chain = two.gate.log.verify()
    assert chain.ok, chain
    assert chain.erased == len(done.events)
    report = two.gate.verify()  # the read model is what a replay makes of the log now
    assert report.ok, report.checks


def test_an_unmerge_gives_the_duplicate_back_sealed(two: Two) -> None:
    merged = two.merge()
    head = two.gate.log.head()[0]
    undone = two.gate.unmerge_nodes(merge=merged.merge, reason="two people after all", **REVIEW)
    assert isinstance(undone, UnmergeResult), undone
    stored = two.stored_since(head)
    for needle in two.needles():
        assert needle not in stored
    assert two.node(two.duplicate) == ({"name": two.duplicate}, "g2@x.org")
    assert two.node(two.survivor) == ({"name": two.survivor}, "g1@x.org")
    # and each is its own person again: forgetting one leaves the other
    assert isinstance(
        two.gate.forget("Person", {"name": two.duplicate}, reason="asked"), ForgetResult
    )
    assert two.node(two.survivor) == ({"name": two.survivor}, "g1@x.org")


def test_an_unmerge_of_forgotten_people_is_refused_without_a_trace(two: Two) -> None:
    merged = two.merge()
    assert isinstance(
        two.gate.forget("Person", {"name": two.survivor}, reason="asked"), ForgetResult
    )
    head = two.gate.log.head()
    refused = two.gate.unmerge_nodes(merge=merged.merge, reason="undo", **REVIEW)
    assert isinstance(refused, Rejected)
    assert refused.error_code == "MERGE_NOT_UNDOABLE"
    assert "forgotten" in refused.message
    assert two.gate.log.head() == head


def test_a_merge_request_names_no_one_in_its_idempotency_record(two: Two) -> None:
    """Its digest is of the request as sealed: the clear names put back where the seals are
    (in either order) hash to no record, so a guess of both cannot be confirmed."""
    head = two.gate.log.head()[0]
    merged = two.gate.merge_nodes(
        label="Person",
        survivor_keys={"name": two.survivor},
        duplicate_keys={"name": two.duplicate},
        reason="the same person",
        idempotency_key="merge-1",
        **REVIEW,
    )
    assert isinstance(merged, MergeResult), merged
    event = two.gate.log.read(after_seq=head, limit=1000, sealed=True).events[-1]
    text = canonical_json(event.request).decode()
    assert len(SEAL.findall(text)) == 2
    records = digests(two.gate)
    for names in permutations([two.survivor, two.duplicate]):
        first, second = (canonical_json(name).decode() for name in names)
        before, between, after = SEAL.split(text)
        clear = before + first + between + second + after
        assert hashlib.sha256(clear.encode()).hexdigest() not in records


def test_a_chain_of_merges_is_one_person_to_forget(two: Two) -> None:
    """The duplicate merged into a node that was merged in turn: forgetting the first
    forgets the three (its alias moved to the last survivor with the second merge)."""
    third = f"{two.survivor} Jr"
    created = two.gate.write_node(
        label="Person",
        merge_keys={"name": third},
        resolution="new",
        source="t",
        extraction_method="manual",
    )
    assert created.status == "written", created
    first = two.gate.merge_nodes(
        label="Person", survivor_keys={"name": third}, duplicate_keys={"name": two.duplicate},
        reason="the same", **REVIEW,
    )  # fmt: skip
    assert isinstance(first, MergeResult), first
    second = two.gate.merge_nodes(
        label="Person", survivor_keys={"name": two.survivor}, duplicate_keys={"name": third},
        reason="the same", **REVIEW,
    )  # fmt: skip
    assert isinstance(second, MergeResult), second
    done = two.gate.forget("Person", {"name": two.duplicate}, reason="asked")
    assert isinstance(done, ForgetResult), done
    assert {done.node, *done.merged} == {first.merged, first.survivor, second.survivor}
    stored = two.stored_since(0)
    for needle in [*two.needles(), third]:
        assert needle not in stored
    assert two.gate.verify().ok
