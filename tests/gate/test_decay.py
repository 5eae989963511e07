"""Temporal decay at read time (issue 12, seed 000's appendix): a confidence halves every
half-life of its extraction method when read; the log keeps what the gate computed."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from tests.conftest import seed_document
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.schema import SchemaDocumentError, parse_document

WRITTEN = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_read_decays_by_the_methods_half_life(db_path: Path) -> None:
    document = seed_document()
    document["half_lives"] = {"llm": "P30D"}
    with Gate.open(db_path, default_actor=Actor(agent="a")) as gate, freeze_time(WRITTEN):
        gate.publish_schema(document)
        for name, method in (("Ada", "llm"), ("Grace", "parsed")):
            gate.write_node(
                label="Person", merge_keys={"name": name}, source="s",
                extraction_method=method, reliability=0.8,
            )  # fmt: skip
    with Gate.open(db_path) as gate:
        reader = gate.reader()
        refs: list[Mapping[str, Any]] = [
            {"label": "Person", "merge_keys": {"name": n}} for n in ("Ada", "Grace")
        ]
        with freeze_time(WRITTEN + timedelta(days=60)):
            ada, grace = reader.open_nodes(refs).nodes
        stored = gate.log.read().events[-2].provenance
    assert ada.provenance.decayed_confidence == pytest.approx(ada.provenance.confidence / 4)
    assert grace.provenance.decayed_confidence is None  # parsed has no half-life
    assert "decayed_confidence" not in grace.provenance.model_dump(exclude_none=False)
    assert stored is not None
    assert stored["confidence"] == ada.provenance.confidence  # the log is untouched


def test_a_half_life_must_be_positive() -> None:
    document = seed_document()
    document["half_lives"] = {"llm": "-P1D"}
    with pytest.raises(SchemaDocumentError, match="half-life of 'llm' must be positive"):
        parse_document(document)


def test_a_schema_without_half_lives_keeps_its_version() -> None:
    document = seed_document()
    assert (
        parse_document(document).version()
        == parse_document({**document, "half_lives": None}).version()
    )
