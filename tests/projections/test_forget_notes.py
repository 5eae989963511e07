"""A file projection given a forgetting's receipt keeps the subject's values (it cannot take
them out of itself): its replay says so and names the rebuild that lets go of them; a
rebuild holds none of them and says nothing."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import AGENT, FIXTURES
from writegate.gate import Gate
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.runner import rebuild, replay


def test_a_file_projection_that_kept_forgotten_values_says_to_rebuild(tmp_path: Path) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    with Gate.open(tmp_path / "log.db", default_actor=AGENT) as gate:
        assert gate.publish_schema(FIXTURES / "personal_schema.yaml").status == "published"
        gate.write_node(
            label="Person", merge_keys={"name": marker}, source="t", extraction_method="manual"
        )
        projector = JsonlProjector(tmp_path / "graph.jsonl", gate.log)
        try:
            assert replay(gate.log, projector).notes == ()
            gate.forget("Person", {"name": marker}, reason="asked")
            (note,) = replay(gate.log, projector).notes
            assert note.endswith("rebuild it (writegate rebuild jsonl) to let go of them")
            assert marker.encode() in (tmp_path / "graph.jsonl").read_bytes()
            assert replay(gate.log, projector).notes == ()  # said once, for the receipt given
            assert rebuild(gate.log, projector).notes == ()
        finally:
            projector.close()
        assert marker.encode() not in (tmp_path / "graph.jsonl").read_bytes()
