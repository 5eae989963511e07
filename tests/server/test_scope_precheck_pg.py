"""A served write's scope check before it runs (``write_scopes.outside_grant``) asks the
read model for the one node a single write names in one statement, outside any
transaction: on PostgreSQL one round trip, not a read transaction's three (``BEGIN``, the
read, ``ROLLBACK``), counted on the wire. Its answer is the same: a node there in a scope
outside the grant is refused before the write runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.postgres import Server
from tests.roundtrips import RoundTrips
from tests.server.test_scope_grants import B1, PROVENANCE, scoped_log
from writegate.gate import Gate
from writegate.gate.server.calls import Calls
from writegate.gate.server.grants import declared_scopes
from writegate.gate.server.policy import Policy, Principal
from writegate.gate.server.write_scopes import outside_grant
from writegate.gate.server.write_tools import WRITE_TOOLS

WRITE_NODE = next(spec for spec in WRITE_TOOLS if spec.name == "write_node")


@pytest.fixture
def relay(postgres: Server) -> Iterator[RoundTrips]:
    with RoundTrips(postgres.port) as relay:
        yield relay


def checked(gate: Gate, scopes: frozenset[str], raw: dict[str, Any]) -> Any:
    calls = Calls(gate, Policy.load(), None, frozenset())
    principal = Principal("agent-a", session="s1", transport="http", scopes=scopes)
    grant = calls.grant(principal, declared_scopes(gate.current_schema()))
    return outside_grant(WRITE_NODE, calls.make(principal, WRITE_NODE, raw, grant))


def test_a_single_writes_scope_check_is_one_statement(relay: RoundTrips, pg_dsn: str) -> None:
    with Gate.open(relay.dsn(str(scoped_log(pg_dsn)))) as gate:
        inside = {"label": "Orchard", "merge_keys": {"name": "apple one"}, **PROVENANCE}
        checked(gate, frozenset({"a"}), inside)  # the schema loaded, as a serving gate has it
        relay.reset()
        assert checked(gate, frozenset({"a"}), inside) is None
        ran = list(relay.ran)
        assert (len(ran), relay.reset()) == (1, 1)
        assert ran[0].startswith("SELECT")
        relay.reset()
        refused = checked(gate, frozenset({"a"}), {**B1, **PROVENANCE})
        assert (refused.error_code, refused.details["scopes"]) == ("POLICY_DENIED", ["b"])
