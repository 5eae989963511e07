"""Fixtures shared by the gate's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import AGENT
from tests.gate.scoped import SCHEMA
from writegate.gate import Gate


@pytest.fixture
def scoped_gate(db_path: str | Path) -> Iterator[Gate]:
    """A gate whose schema puts nodes in scopes (``tests.gate.scoped``)."""
    g = Gate.open(db_path, default_actor=AGENT)
    assert g.publish_schema(SCHEMA).status == "published"
    yield g
    g.close()
