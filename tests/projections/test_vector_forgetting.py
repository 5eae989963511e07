"""The vector follower after a forgetting, on both backends: the forgotten person's vector
is made again from what their document now says (a vector is close enough to its text to
say what it said), the others stay as they were, and the store equals one rebuilt."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import AGENT, ROOT
from tests.personal import CLAIM
from tests.projections.hashing_embedder import HashingEmbedder
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult
from writegate.projections import runner
from writegate.projections.vectors.projector import VectorProjector

SCHEMA = ROOT / "fixtures" / "personal_schema.yaml"


@pytest.fixture
def people(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        for name in ("Ada Quill", "Bo Marsh"):
            written = gate.write_node(label="Person", merge_keys={"name": name}, **CLAIM)
            assert written.status == "written", written
        yield gate


def vectors(follower: VectorProjector) -> dict[str, bytes]:
    return {row[0]: row[2] for row in follower.snapshot()}


def test_a_forgotten_persons_vector_is_made_again_and_the_others_stay(
    people: Gate, tmp_path: Path
) -> None:
    follower = VectorProjector(people.log, HashingEmbedder(), path=tmp_path / "vectors.db")
    runner.replay(people.log, follower)
    before = vectors(follower)
    assert len(before) == 2
    done = people.forget("Person", {"name": "Ada Quill"}, reason="asked")
    assert isinstance(done, ForgetResult), done
    assert done.node is not None
    assert done.node in before
    assert runner.replay(people.log, follower).notes == ()  # in place: not rebuilt
    after = vectors(follower)
    assert after.get(done.node) != before[done.node]
    assert {i: v for i, v in after.items() if i != done.node} == {
        i: v for i, v in before.items() if i != done.node
    }
    rebuilt = VectorProjector(people.log, HashingEmbedder(), path=tmp_path / "rebuilt.db")
    runner.rebuild(people.log, rebuilt)
    assert rebuilt.snapshot() == follower.snapshot()
