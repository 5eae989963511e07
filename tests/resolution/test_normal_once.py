"""A creating write normalizes the name it writes once, for its keys and its probes alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from writegate.eventlog import Actor
from writegate.gate import Gate, WriteNodeResult
from writegate.gate.resolution import matching
from writegate.gate.resolution.normalize import NormalizedName
from writegate.gate.schema.document import ResolutionDoc

SCHEMA = {"nodes": {"Person": {"merge_keys": ["name"], "resolution": {"policy": "propose"}}}}


def test_a_creating_write_normalizes_its_name_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Gate.open(tmp_path / "log.db", default_actor=Actor(agent="a")) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        claim: dict[str, Any] = {"source": "test", "extraction_method": "manual"}
        gate.write_node(label="Person", merge_keys={"name": "Grace Hopper"}, **claim)
        normalized: list[str] = []
        plain = matching.normal_name

        def counted(rules: ResolutionDoc, name: str) -> NormalizedName:
            normalized.append(name)
            return plain(rules, name)

        monkeypatch.setattr(matching, "normal_name", counted)
        out = gate.write_node(label="Person", merge_keys={"name": "Ada Lovelace"}, **claim)
        assert isinstance(out, WriteNodeResult)
        assert out.created
        assert normalized.count("Ada Lovelace") == 1
