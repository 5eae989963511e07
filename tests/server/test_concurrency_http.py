"""Twenty agents writing at once over HTTP lose nothing and duplicate nothing."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.conftest import person
from tests.server.conftest import published
from tests.server.harness import http_agent, http_server
from writegate.gate import Gate
from writegate.gate.server.tokens import create_token

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CLIENTS, WRITES = 20, 100


async def test_twenty_concurrent_http_clients(db_path: Path) -> None:
    with http_server(published(db_path)) as server:
        tokens = [
            create_token(Path(str(db_path) + ".tokens.json"), f"agent-{i}", ("writer",))
            for i in range(CLIENTS)
        ]
        errors: list[object] = []

        async def writer(index: int) -> None:
            async with http_agent(server.url, tokens[index]) as agent:
                for n in range(WRITES):
                    out = await agent.call("write_node", person(f"a{index}-{n}"))
                    if out.is_error:
                        errors.append(out.data)

        async with anyio.create_task_group() as group:
            for index in range(CLIENTS):
                group.start_soon(writer, index)

    assert errors == []
    with Gate.open(db_path, create=False) as gate:
        head_seq, _ = gate.log.head()
        assert head_seq == 1 + CLIENTS * WRITES  # the schema event, then exactly 2,000 writes
        events = list(gate.log.iter_events())
        assert [e.seq for e in events] == list(range(1, head_seq + 1))
        written = [e for e in events if e.type == "node.written"]
        assert len({e.payload["node"]["identity"] for e in written}) == CLIENTS * WRITES
        by_agent = {e.actor.agent for e in written}
        assert by_agent == {f"agent-{i}" for i in range(CLIENTS)}
        report = gate.verify()
        assert report.ok, report.first_failure
