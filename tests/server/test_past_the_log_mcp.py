"""A value past what the log can hold, sent over MCP, is the caller's ``INVALID_ARGUMENT``
naming it: a cursor SQLite cannot hold, a time that leaves the calendar once in UTC, a merge
key past 64 bits. Each was an internal error (an ``OverflowError`` deep in a read or a write's
timestamp), and the desk, which asks these tools, answered them as Internal Server Errors."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import person
from tests.server.harness import Served

pytestmark = pytest.mark.anyio
HUGE = 99999999999999999999
OUT = "9999-12-31T23:59:59-23:59"  # a time, but past the calendar's last day in UTC
ADA = {"label": "Person", "merge_keys": {"name": "Ada"}}
CALLS: list[tuple[str, tuple[str, ...], dict[str, Any], str]] = [
    ("audit_events", ("auditor",), {"cursor": str(HUGE)}, "cursor"),
    ("audit_events", ("auditor",), {"since": OUT}, "since"),
    ("audit_conflicts", ("auditor",), {"until": "0001-01-01T00:00:00+14:00"}, "until"),
    ("node_history", ("reader",), {"node": ADA, "cursor": str(HUGE)}, "cursor"),
    ("open_nodes", ("reader",), {"nodes": [ADA], "as_of": OUT}, "as_of"),
    ("open_nodes", ("reader",), {"nodes": [{**ADA, "merge_keys": {"name": HUGE}}]}, "name"),
    ("write_node", ("writer",), person("Ada", valid_from=OUT), "valid_from"),
]


@pytest.mark.parametrize(("tool", "roles", "args", "field"), CALLS)
async def test_a_value_past_what_the_log_holds_is_an_invalid_argument(
    served: Served, tool: str, roles: tuple[str, ...], args: dict[str, Any], field: str
) -> None:
    async with served.agent("a", roles) as agent:
        out = await agent.call(tool, args)
        assert out.is_error, out.data
        assert out.data["error_code"] == "INVALID_ARGUMENT", out.data
        assert field in out.data["message"], out.data
