"""The floor for MCP benchmarks: the official SDK's own server with one tool that does nothing.

``python bench/noop_server.py`` serves it over stdio on the SDK's transport; ``--pipes`` on
writegate's (``gate.server.pipes``: the event loop's own pipes, no worker threads), so
writegate can be compared with the floor of either; ``--http PORT`` over Streamable HTTP
(uvicorn, as the SDK's runner, no authentication). Its tool ``noop`` takes the arguments
of writegate's ``write_node`` and answers a small typed result: the request costs what a
write's does, with no work behind it; ``noop_read`` does the same for a question, and
``noop_sized`` answers it with ``size`` bytes of JSON (records of a few fields, the shape of
a query's answer): what the SDK itself pays to send and check an answer that large.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from writegate.gate.server.stdio import run_stdio

server = MCPServer("noop")


class Noted(BaseModel):
    status: str
    label: str


@server.tool()
def noop(
    label: str,
    merge_keys: dict[str, Any],
    properties: dict[str, Any] | None = None,
    source: str = "",
    extraction_method: str = "",
    reliability: float = 0.0,
) -> Noted:
    """Accept a node and do nothing with it."""
    return Noted(status="noted", label=label)


class Asked(BaseModel):
    status: str
    query: str


@server.tool()
def noop_read(query: str) -> Asked:
    """Accept a question and answer nothing."""
    return Asked(status="ok", query=query)


class Record(BaseModel):
    entity: str
    score: float
    seq: int


class Sized(BaseModel):
    status: str
    records: list[Record]


@server.tool()
def noop_sized(query: str, size: int) -> Sized:
    """Accept a question and answer about ``size`` bytes of JSON that mean nothing."""
    one = Record(entity=query.ljust(48, "."), score=0.123456789, seq=123456)
    count = max(1, size // len(one.model_dump_json()))
    return Sized(status="ok", records=[one] * count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--pipes", action="store_true")
    args = parser.parse_args()
    if args.pipes:
        anyio.run(run_stdio, server._lowlevel_server)
    elif args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    main()
