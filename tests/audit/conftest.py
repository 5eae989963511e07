"""A history with several agents, sources, methods, remaps, deletions and rejections."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from tests.conftest import SEED_SCHEMA, person, relationship
from tests.projections.history import ADA, BOB, T0, build_history
from writegate.gate import Gate


@pytest.fixture
def audited(db_path: Path) -> Path:
    with Gate.open(db_path) as gate:
        with freeze_time(T0 - timedelta(minutes=1)):
            gate.publish_schema(SEED_SCHEMA)
        build_history(gate)
        with freeze_time(T0 + timedelta(minutes=11)):
            gate.write_node(actor=BOB, **person("Eve", properties={"confidence": 1.0}))
            gate.write_relationship(actor=BOB, **relationship(type="DIRECTED"))
            gate.write_relationship(actor=ADA, **relationship(to_keys={"name": "Nobody"}))
    return db_path
