"""A file projection cannot take a forgetting's values out of itself, so when its replay or
its follower reaches a forgetting's receipt it is rebuilt from the log (which reads the
subject's values as null): no byte of them stays in the file, and the replay says so."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from tests.conftest import AGENT, FIXTURES
from tests.personal import person
from writegate.gate import Gate
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.runner import follow, replay


def test_a_file_projection_reaching_a_forgetting_is_rebuilt_without_its_values(
    tmp_path: Path,
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    with Gate.open(tmp_path / "log.db", default_actor=AGENT) as gate:
        assert gate.publish_schema(FIXTURES / "personal_schema.yaml").status == "published"
        person(gate, marker)
        person(gate, "Ada")
        projector = JsonlProjector(tmp_path / "graph.jsonl", gate.log)
        try:
            assert replay(gate.log, projector).notes == ()
            projector.flush()
            assert marker.encode() in (tmp_path / "graph.jsonl").read_bytes()
            gate.forget("Person", {"name": marker}, reason="asked")
            (note,) = replay(gate.log, projector).notes
            assert note.endswith("rebuilt from the log to let go of them")
            assert replay(gate.log, projector).notes == ()  # said once, for the receipt given
            assert projector.checkpoint() == gate.log.head()[0]
        finally:
            projector.close()
        kept = (tmp_path / "graph.jsonl").read_bytes()
        assert marker.encode() not in kept
        assert b"Ada" in kept


def _followed(gate: Gate, projector: JsonlProjector) -> None:
    """Follow the log until the projector is at its head, then stop (the file rendered)."""
    stop = threading.Event()
    following = threading.Thread(
        target=follow, args=(gate.log, {"jsonl": projector}), kwargs={"stop": stop}
    )
    following.start()
    try:
        for _ in range(400):
            if projector.checkpoint() >= gate.log.head()[0]:
                break
            stop.wait(0.05)
    finally:
        stop.set()
        following.join()
    assert projector.checkpoint() == gate.log.head()[0]


def test_a_followed_file_projection_lets_go_of_a_forgotten_subject(tmp_path: Path) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    with Gate.open(tmp_path / "log.db", default_actor=AGENT) as gate:
        assert gate.publish_schema(FIXTURES / "personal_schema.yaml").status == "published"
        person(gate, marker)
        projector = JsonlProjector(tmp_path / "followed.jsonl", gate.log)
        try:
            _followed(gate, projector)
            assert marker.encode() in (tmp_path / "followed.jsonl").read_bytes()
            gate.forget("Person", {"name": marker}, reason="asked")
            _followed(gate, projector)
        finally:
            projector.close()
        assert marker.encode() not in (tmp_path / "followed.jsonl").read_bytes()
