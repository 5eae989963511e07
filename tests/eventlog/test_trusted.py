"""``trusted`` builds a model from values the log wrote without validating them: the
instance is the one validation gives, whatever pydantic keeps beside the fields."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from writegate.eventlog.events import trusted
from writegate.gate.models import NodeRef
from writegate.gate.reads.views import NodeView, Provenance
from writegate.language import Authority


def _provenance() -> dict[str, object]:
    return {
        "source": "bench",
        "extraction_method": "api",
        "confidence": 0.9,
        "agent": "a",
        "written_at": "2026-11-26T00:00:00Z",
        "seq": 7,
        "decayed_confidence": None,
        "observations": ["o1"],
        "corroborated_confidence": None,
        "sources": None,
        "authority": Authority(rank=2, by="method api"),  # trusted: nested as its model
    }


def test_a_trusted_model_is_the_validated_one() -> None:
    values = _provenance()
    made, checked = trusted(Provenance, dict(values)), Provenance.model_validate(values)
    assert made == checked
    assert made.model_dump(by_alias=True) == checked.model_dump(by_alias=True)
    assert made.model_dump_json() == checked.model_dump_json()
    assert made.model_fields_set == set(Provenance.model_fields)
    assert made.__pydantic_extra__ is None
    assert made.__pydantic_private__ is None


def test_a_trusted_model_nests_and_stays_frozen() -> None:
    view = trusted(
        NodeView,
        {
            "label": "Person",
            "merge_keys": {"name": "Ada"},
            "properties": {"name": "Ada"},
            "version": 1,
            "stub": False,
            "remapped_from": None,
            "provenance": trusted(Provenance, _provenance()),
            "more_relationships": None,
        },
    )
    assert view == NodeView.model_validate(view.model_dump())
    with pytest.raises(ValidationError):
        setattr(view, "version", 2)  # noqa: B010 (frozen: refused)
    copied = view.model_copy(update={"version": 2})
    assert copied.version == 2
    assert view.version == 1
    assert trusted(NodeRef, {"label": "P", "merge_keys": {"k": 1}}).label == "P"
