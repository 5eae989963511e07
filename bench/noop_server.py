"""The floor for MCP benchmarks: the official SDK's own server with one tool that does nothing.

``python bench/noop_server.py`` serves it over stdio; ``--http PORT`` over Streamable HTTP
(uvicorn, as the SDK's runner, no authentication). Its tool takes a node shaped like
writegate's ``write_node`` arguments and answers a small typed result, so a call carries
the same bytes each way as a write without any work behind it.
"""

from __future__ import annotations

import argparse
from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args()
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    main()
